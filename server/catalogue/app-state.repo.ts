/**
 * The `app_state` column of `nodes` (the catalogue owns the table): the items apps put on files
 * (app-state.ts holds the rules). On `db.async`: a change is one unit of work with the outbox record of
 * it; the rules decide through a callback inside it.
 */
import type { Db } from '../db';
import type { Tx } from '../db/async';
import type { EventBus } from '../events';
import { NodesRepo, SUBTREE, subtree, type NodeRow } from './nodes.repo';
import type { GateEvent } from './gate.repo';
import type { StorageRef } from './storage-ref';

const Q = {
  set: 'UPDATE nodes SET app_state = ? WHERE tenant_id = ? AND id = ?',
  below: `SELECT path, app_state FROM nodes WHERE tenant_id = ? AND ${SUBTREE} AND deleted_at IS NULL AND app_state IS NOT NULL`,
};

export class AppStateRepo {
  private nodes: NodesRepo;
  constructor(
    private db: Db,
    private bus: EventBus,
  ) {
    this.nodes = new NodesRepo(db);
  }

  /**
   * Changes the items of the item at `rel` in one serializable unit (two apps putting items on one file
   * at once each read the list; both items must stay). `change` sees the node and returns its items and
   * whether they changed (then they are written with `events`), or throws to refuse.
   */
  change(
    s: StorageRef,
    rel: string,
    change: (node: NodeRow | undefined) => { items: string[]; changed: boolean },
    events: GateEvent[],
  ): Promise<{ items: string[]; changed: boolean }> {
    const self = this;
    return this.db.async.unit(
      function* (t) {
        const node = yield* self.nodes.getIn(t, s, rel);
        const out = change(node);
        if (!out.changed || !node) return out;
        yield* self.setItemsIn(t, node, out.items);
        for (const [event, payload] of events) yield* self.bus.recordIn(t, s, event, payload as never);
        return out;
      },
      { isolation: 'serializable' },
    );
  }

  /** Stores the node's items (the column's JSON array; none is NULL). */
  *setItemsIn(t: Tx, node: Pick<NodeRow, 'id' | 'tenant_id'>, items: string[]) {
    yield* t.sql(Q.set, [items.length ? JSON.stringify(items) : null, node.tenant_id, node.id]);
  }

  /** The raw items of the live nodes at `rel` and below it that have any ('' is the whole storage): one query. */
  within(s: StorageRef, rel: string): Promise<Array<{ path: string; app_state: string }>> {
    return this.db.async.sql(Q.below, subtree(s, rel));
  }
}
