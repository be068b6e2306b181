/**
 * The `app_state` column of `nodes` (the catalogue owns the table): the items
 * apps put on files (app-state.ts holds the rules). Synchronous for now (issue
 * 30 continues): `setItems` runs inside the service's write transaction with
 * the outbox record of the change, which is synchronous.
 */
import type { Db } from '../db';
import { SUBTREE, subtree } from './nodes.repo';

export class AppStateRepo {
  private s;

  constructor(db: Db) {
    this.s = {
      set: db.sqlite.prepare('UPDATE nodes SET app_state = ? WHERE id = ?'),
      below: db.sqlite.prepare(`SELECT path, app_state FROM nodes WHERE ${SUBTREE} AND deleted_at IS NULL AND app_state IS NOT NULL`),
    };
  }

  /** Stores the node's items (the column's JSON array; none is NULL). Call inside a write transaction. */
  setItems(nodeId: number, items: string[]): void {
    this.s.set.run(items.length ? JSON.stringify(items) : null, nodeId);
  }

  /** The raw items of the live nodes at `rel` and below it that have any ('' is the whole storage): one query. */
  within(storageId: number, rel: string): Array<{ path: string; app_state: string }> {
    return this.s.below.all(...subtree(storageId, rel)) as Array<{ path: string; app_state: string }>;
  }
}
