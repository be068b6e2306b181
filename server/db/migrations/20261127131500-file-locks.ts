import { portable } from './kit';

/**
 * App locks on files (owner: catalogue). Keyed by node id, so a lock follows
 * its file through a rename or move within the storage (node ids survive
 * those) and goes with the node when the file is deleted. No column shares a
 * name with `nodes`: listings join this table without qualifying the entry's
 * columns. App state needs no table: it is the `nodes.app_state` column.
 */
export const fileLocks = portable('20261127131500-file-locks', ({ schema: s, int }) => [
  s
    .createTable('file_locks')
    .addColumn('node_id', int, (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
    .addColumn('plugin', 'text', (c) => c.notNull())
    .addColumn('plugin_label', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('reason_text', 'text')
    .addColumn('until', 'text')
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('locked_by', int)
    .addColumn('locked_at', 'text', (c) => c.notNull()),
  s.createIndex('file_locks_until').on('file_locks').column('until').where('until', 'is not', null),
]);
