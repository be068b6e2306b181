import { portable } from './kit';

/**
 * NFS exports (owner: gateways): a storage or folder (`path`, a UI path)
 * served over NFSv3 to the client addresses in `clients` (a comma list of
 * addresses and CIDR ranges), with the rights of one account or of one of
 * its API keys (NFS has no passwords). An export goes with its account or key.
 */
export const nfsExports = portable('20261205160000-nfs-exports', ({ schema: s, int, serial }) => [
  s
    .createTable('nfs_exports')
    .addColumn('id', int, serial)
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('clients', 'text', (c) => c.notNull())
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key_id', int, (c) => c.references('api_keys.id').onDelete('cascade'))
    .addColumn('read_only', int, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull()),
]);
