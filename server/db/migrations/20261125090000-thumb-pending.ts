import { sql } from 'kysely';
import { portable } from './kit';

/**
 * The thumbnail backlog is durable: files waiting for a thumbnail stay
 * `pending` in `nodes` (owner: catalogue) and the dispatcher pages them by
 * id. A partial index keeps that paging proportional to the backlog, not to
 * the catalogue.
 */
export const thumbPending = portable('20261125090000-thumb-pending', ({ schema: s }) => [
  s.createIndex('nodes_thumb_pending').on('nodes').column('id').where(sql.raw<boolean>(`thumb_state = 'pending'`)),
]);
