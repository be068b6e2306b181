import type { Migration } from './types';

/**
 * The thumbnail backlog is durable: files waiting for a thumbnail stay
 * `pending` in `nodes` (owner: catalogue) and the dispatcher pages them by
 * id. A partial index keeps that paging proportional to the backlog, not to
 * the catalogue.
 */
export const thumbPending: Migration = {
  name: '20261125090000-thumb-pending',
  sql: `CREATE INDEX nodes_thumb_pending ON nodes(id) WHERE thumb_state = 'pending';`,
};
