/** The vault and encrypted folders (docs/vault.md): the service the vault routes use. */
import type { Auth } from '../auth';
import type { Catalogue } from '../catalogue';
import { DEFAULT_TENANT, type Db } from '../db';
import type { FileService } from '../files';
import { VaultRepo } from './vault.repo';
import { VaultService } from './vault.service';

export { VaultService, MAX_THUMB_BYTES, type FolderView, type KdfParams, type VaultView } from './vault.service';

export function createVault(o: { db: Db; files: FileService; catalogue: Catalogue; auth: Auth }): VaultService {
  const repo = new VaultRepo(o.db);
  o.catalogue.roots.useWriter(repo);
  return new VaultService({
    repo,
    files: o.files,
    roots: o.catalogue.roots,
    nodes: o.catalogue.nodes,
    throttle: o.auth.vaultThrottle,
    // Tenant 1 until the vault takes a scope (docs/tenants.md, "Status").
    nameOf: async (id) => (await o.auth.repo.byId(DEFAULT_TENANT, id))?.username ?? null,
  });
}
