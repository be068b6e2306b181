/** The vault and encrypted folders (docs/vault.md): the service the vault routes use. */
import type { Auth } from '../auth';
import type { Catalogue } from '../catalogue';
import type { Db } from '../db';
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
    nameOf: async (s, id) => (await o.auth.repo.byId(s, id))?.username ?? null,
  });
}
