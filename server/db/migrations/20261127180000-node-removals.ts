import { portable } from './kit';

/**
 * Paths whose catalogue rows the write gate removed or moved away lately, with when (owner: catalogue,
 * `catalogue/nodes.repo.ts`): a sync that listed a folder before such a removal must not put the rows
 * back after it, whichever instance removed them. Rows live ten minutes (a listing is seconds old).
 */
export const nodeRemovals = portable('20261127180000-node-removals', ({ schema: s, int }) => [
  s
    .createTable('node_removals')
    .addColumn('storage_id', int, (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('removed_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('node_removals_pk', ['storage_id', 'path']),
  s.createIndex('node_removals_at').on('node_removals').columns(['storage_id', 'removed_at']),
]);
