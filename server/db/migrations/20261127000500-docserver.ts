import { portable } from './kit';

/**
 * The document server integration (owner: docserver). `external_services`:
 * one row per named external service (`docserver`, `diagram`), the shared JWT
 * secret sealed with the install's key, `env_managed` when the environment
 * re-applies it at every start. `docserver_saves`: the newest document-editor
 * save written back per node (which editing session, its `lastsave`, and the
 * etag the write produced), so a replayed older callback cannot overwrite it.
 */
export const docserver = portable('20261127000500-docserver', ({ schema: s, int }) => [
  s
    .createTable('external_services')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('jwt_secret', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('callback_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('healthy', int)
    .addColumn('last_check', 'text')
    .addColumn('env_managed', int, (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s
    .createTable('docserver_saves')
    .addColumn('node_id', int, (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
    .addColumn('doc_key', 'text', (c) => c.notNull())
    .addColumn('lastsave', int, (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('saved_at', 'text', (c) => c.notNull()),
]);
