import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Text extraction state for full-text search (owner: catalogue; catalogue/text-extracts.repo.ts): one row
 * per file whose text was asked for, keyed by node id so a rename or move keeps it (no re-extraction),
 * and gone with the node. `size`/`mtime` are the version it describes: a write that changes either sends
 * the file back to `pending`. `state`: pending, done, failed (with `reason`) or skipped (with `reason`).
 */
export const textExtracts = portable('20261206100000-text-extracts', ({ schema: s, int }) => [
  s
    .createTable('text_extracts')
    .addColumn('node_id', int, (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('size', int, (c) => c.notNull())
    .addColumn('mtime', int, (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('chars', int, (c) => c.notNull().defaultTo(0))
    .addColumn('capped', int, (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  // The drain pages the backlog by id: only the waiting rows are in this index.
  s.createIndex('text_extracts_pending').on('text_extracts').column('node_id').where(sql.ref('state'), '=', 'pending'),
]);
