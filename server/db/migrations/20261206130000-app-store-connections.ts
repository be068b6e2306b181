import { portable } from './kit';

/**
 * App store connections (owner: store; docs/app-store.md): a store the admin
 * added by URL with the Ed25519 key they trust for its index (`fingerprint`
 * is that key's, shown to compare), on or off, and the last refresh's outcome
 * (the ETag for the next conditional GET, when, and the error if it failed).
 */
export const appStoreConnections = portable('20261206130000-app-store-connections', ({ schema: s, int, serial }) => [
  s
    .createTable('app_store_connections')
    .addColumn('id', int, serial)
    .addColumn('url', 'text', (c) => c.notNull().unique())
    .addColumn('public_key_pem', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('enabled', int, (c) => c.notNull().defaultTo(1))
    .addColumn('etag', 'text')
    .addColumn('refreshed_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('added_by', int, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('added_at', 'text', (c) => c.notNull()),
]);
