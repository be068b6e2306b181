/**
 * The protocol gateways' shared core: sign-in (`GatewayAuth`), protocol
 * paths (`treePath`), the tree for one actor (`GatewayTree`, always through
 * the file service and its write gate) and the admin's view of listeners and
 * sessions (`GatewayRegistry`). Each protocol (WebDAV, SFTP, FTPS, S3, NFS) is a
 * thin adapter over these: it maps its requests onto the tree and the
 * `AppError` codes onto its own error form, in one table per protocol.
 */
import type { Actor, Auth, TenantDirectory } from '../auth';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { FileService } from '../files';
import type { JobQueue } from '../jobs';
import type { UploadsService } from '../uploads';
import type { SettingsStore } from '../settings';
import { GatewayAuth, type Protocol } from './auth';
import { NodeIds } from './node-ids';
import { GatewayRegistry } from './registry';
import { GatewayTree } from './tree';

export { GatewayAuth, type Protocol } from './auth';
export { GatewayRegistry } from './registry';
export { GatewayTree, type GatewayEntry, type GatewayEncrypted } from './tree';
export { treePath, splitLast, type Dots } from './paths';
export { NodeIds, type NodePlace } from './node-ids';

export interface GatewayCore {
  auth: GatewayAuth;
  registry: GatewayRegistry;
  /** The tree as `actor` sees it through `protocol`. */
  tree(actor: Actor, protocol: Protocol): GatewayTree;
  /** Node ids for paths and back (NFS handles). */
  nodes: NodeIds;
  /**
   * Where a tenant's names sit in a namespace the gateways share between tenants (NFS mount paths): '' for
   * tenant 1 and in single-tenant mode, `/t/<slug>` for any other (the web's prefix).
   */
  tenantBase(t: TenantScope): string;
}

/** `tenants`: the tenant directory in multi-tenant mode (sign-in names, suspension), null in single-tenant mode. */
export function createGatewayCore(d: {
  auth: Auth;
  tenants: TenantDirectory | null;
  files: FileService;
  queue: JobQueue;
  uploads: UploadsService;
  settings: SettingsStore;
}): GatewayCore {
  const encrypted = () => d.settings.get('gateways_encrypted_folders');
  const auth = new GatewayAuth(d.auth, d.tenants);
  return {
    auth,
    registry: new GatewayRegistry(),
    tree: (actor, protocol) => new GatewayTree(actor, protocol, d.files, d.queue, d.uploads, encrypted, (s) => auth.live(s)),
    nodes: new NodeIds(d.files.catalogue),
    tenantBase: (t) => {
      if (!d.tenants || t.tenant_id === DEFAULT_TENANT.tenant_id) return '';
      // A tenant gone from the directory (deleted) keeps a base nobody can type: its exports mount nowhere.
      return `/t/${d.tenants.byId(t.tenant_id)?.slug ?? `~${t.tenant_id}`}`;
    },
  };
}
