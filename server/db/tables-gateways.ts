/** Row types of the protocol gateways' tables (see tables.ts). */
import type { Generated } from 'kysely';
import type { TenantRow } from './tenant-tables';

/** gateways (WebDAV): dead properties set by PROPPATCH, per node. */
export interface DavPropsTable extends TenantRow {
  storage_id: number;
  /** The node's path in its storage (no leading slash; '' is the storage root). */
  path: string;
  /** The parent's path, so a folder listing reads its children's properties in one query. */
  dir: string;
  ns: string;
  name: string;
  /** The property element's content as self-contained XML. */
  value: string;
}

/** gateways: NFS exports (see server/gateways/nfs/exports.repo.ts). */
export interface NfsExportsTable extends TenantRow {
  id: Generated<number>;
  /** UI path of the exported storage or folder (`/<storage>/<folder>`). */
  path: string;
  /** Comma list of client addresses and CIDR ranges allowed to mount. */
  clients: string;
  user_id: number;
  /** An API key of `user_id` whose scope applies instead of the whole account. */
  key_id: number | null;
  read_only: number;
  created_at: string;
}
