import { portable } from './kit';

/**
 * The order of a drop submission's files (owner: shares): their place in the
 * submission, 1 upward, so they list in the order they were announced on both
 * databases (SQLite's implicit rowid gave it before; PostgreSQL has none).
 */
export const dropFileOrder = portable('20261127150000-drop-file-order', ({ schema: s, int }) => [
  s.alterTable('drop_files').addColumn('position', int, (c) => c.notNull().defaultTo(0)),
]);
