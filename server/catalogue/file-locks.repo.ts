/**
 * `file_locks` (the catalogue owns it; file-locks.ts holds the rules): apps' locks on files, keyed by node
 * id. On `db.async`: setting, clearing and sweeping locks are units of work with the outbox record of each
 * change; the rules decide through callbacks inside them. The access check reads no statement: FileLocks
 * keeps every lock in memory (`all` reads them) and checks from there.
 */
import type { Db, TenantScope } from '../db';
import type { Tx } from '../db/async';
import type { EventBus } from '../events';
import type { FileLock } from '../contract';
import { NodesRepo, type NodeRow } from './nodes.repo';
import type { GateEvent } from './gate.repo';
import type { StorageRef } from './storage-ref';

/** A stored lock. */
export interface LockRow extends FileLock {
  token_hash: string;
  locked_by: number | null;
  locked_at: string;
}

/** A stored lock with the live node it is on. */
export interface PlacedLock extends LockRow {
  node_id: number;
  storage_id: number;
  path: string;
}

const COLS = 'l.plugin, l.plugin_label, l.reason, l.reason_text, l.until, l.token_hash, l.locked_by, l.locked_at';

const Q = {
  at: `SELECT ${COLS} FROM nodes n JOIN file_locks l ON l.node_id = n.id WHERE n.storage_id = ? AND n.path = ? AND n.deleted_at IS NULL AND l.tenant_id = ?`,
  // A lock carries its storage's tenant (docs/tenants.md principle 2); another tenant's lock is never replaced.
  put: `INSERT INTO file_locks (tenant_id, node_id, plugin, plugin_label, reason, reason_text, until, token_hash, locked_by, locked_at)
              VALUES (@tenant_id, @node_id, @plugin, @plugin_label, @reason, @reason_text, @until, @token_hash, @locked_by, @locked_at)
              ON CONFLICT(node_id) DO UPDATE SET plugin = excluded.plugin, plugin_label = excluded.plugin_label, reason = excluded.reason,
                reason_text = excluded.reason_text, until = excluded.until, token_hash = excluded.token_hash, locked_by = excluded.locked_by, locked_at = excluded.locked_at
              WHERE file_locks.tenant_id = excluded.tenant_id`,
  drop: 'DELETE FROM file_locks WHERE tenant_id = ? AND node_id = ? RETURNING node_id',
};

/** One placeholder per tenant: system work names every tenant it works for (`l.tenant_id IN (…)`). */
const marks = (tenants: readonly TenantScope[]) => tenants.map(() => '?').join(', ');
const ids = (tenants: readonly TenantScope[]) => tenants.map((x) => x.tenant_id);
const ALL = (tenants: readonly TenantScope[]) =>
  `SELECT ${COLS}, l.node_id, n.storage_id, n.path FROM file_locks l JOIN nodes n ON n.id = l.node_id WHERE l.tenant_id IN (${marks(tenants)}) AND n.deleted_at IS NULL`;
const DUE = (tenants: readonly TenantScope[]) =>
  `SELECT l.tenant_id, n.storage_id, n.path, l.node_id FROM file_locks l JOIN nodes n ON n.id = l.node_id WHERE l.tenant_id IN (${marks(tenants)}) AND l.until IS NOT NULL AND l.until <= ?`;

type Due = { tenant_id: number; storage_id: number; path: string; node_id: number };

export class FileLocksRepo {
  private nodes: NodesRepo;
  constructor(
    private db: Db,
    private bus: EventBus,
  ) {
    this.nodes = new NodesRepo(db);
  }

  /** Records the events of a lock change in its storage's tenant. */
  private *recordIn(t: Tx, s: TenantScope, events: GateEvent[]) {
    for (const [event, payload] of events) yield* this.bus.recordIn(t, s, event, payload as never);
  }

  /**
   * Stores `lock` on the file at `rel` with `events`, in one serializable unit (two apps locking one file
   * at once both read "no lock": one of them must be refused). `decide` sees the node and its current lock
   * and returns the node id to lock, or throws to refuse.
   */
  set(s: StorageRef, rel: string, lock: LockRow, decide: (node: NodeRow | undefined, held: LockRow | undefined) => number, events: GateEvent[]): Promise<void> {
    const self = this;
    return this.db.async.unit(
      function* (t) {
        const nodeId = decide(yield* self.nodes.getIn(t, s, rel), yield* self.atIn(t, s, rel));
        yield* self.putIn(t, s, nodeId, lock);
        yield* self.recordIn(t, s, events);
      },
      { isolation: 'serializable' },
    );
  }

  /**
   * Removes the lock on the file at `rel` when `decide` (seeing the lock) says so, with `events`, in one
   * unit; whether a lock went (the delete is conditional: two clears racing clear once). `decide` may throw to refuse.
   */
  clear(s: StorageRef, rel: string, decide: (held: LockRow | undefined) => boolean, events: GateEvent[]): Promise<boolean> {
    const self = this;
    return this.db.async.unit(function* (t) {
      if (!decide(yield* self.atIn(t, s, rel))) return false;
      const node = yield* self.nodes.getIn(t, s, rel);
      const gone = !!node && (yield* self.dropIn(t, s, node.id));
      if (gone) yield* self.recordIn(t, s, events);
      return gone;
    });
  }

  /** Removes the tenants' locks expired at `now` (ISO), recording `eventsOf` each, in one unit; how many went. */
  sweep(tenants: readonly TenantScope[], now: string, eventsOf: (r: Due) => GateEvent[]): Promise<number> {
    const self = this;
    return this.db.async.unit(function* (t) {
      let n = 0;
      for (const r of yield* self.dueIn(t, tenants, now)) {
        // Conditional: of two instances sweeping at once, one tells each folder.
        if (!(yield* self.dropIn(t, r, r.node_id))) continue;
        yield* self.recordIn(t, r, eventsOf(r));
        n++;
      }
      return n;
    });
  }

  /** The lock on the live node at `rel` (expired ones too), or undefined. */
  *atIn(t: Tx, s: StorageRef, rel: string) {
    return (yield* t.sql<LockRow>(Q.at, [s.id, rel, s.tenant_id]))[0] as LockRow | undefined;
  }

  /** Stores the node's lock in its storage's tenant, replacing the one it has. */
  *putIn(t: Tx, s: TenantScope, nodeId: number, lock: LockRow) {
    yield* t.sql(Q.put, { tenant_id: s.tenant_id, node_id: nodeId, ...lock });
  }

  /** Removes the node's lock; false when it had none. */
  *dropIn(t: Tx, s: TenantScope, nodeId: number) {
    return (yield* t.sql(Q.drop, [s.tenant_id, nodeId])).length > 0;
  }

  /** The tenants' locks expired at `now` (ISO), with where they are. */
  *dueIn(t: Tx, tenants: readonly TenantScope[], now: string) {
    if (!tenants.length) return [];
    return (yield* t.sql<Due>(DUE(tenants), [...ids(tenants), now])).map((r) => ({
      tenant_id: Number(r.tenant_id),
      storage_id: Number(r.storage_id),
      path: r.path,
      node_id: Number(r.node_id),
    }));
  }

  /** Every lock of the tenants on a live node (expired ones too: the rules decide), with where it is; one statement. */
  async all(tenants: readonly TenantScope[]): Promise<PlacedLock[]> {
    if (!tenants.length) return [];
    const rows = await this.db.async.sql<PlacedLock>(ALL(tenants), ids(tenants));
    return rows.map((r) => ({
      ...r,
      node_id: Number(r.node_id),
      storage_id: Number(r.storage_id),
      locked_by: r.locked_by === null ? null : Number(r.locked_by),
    }));
  }
}
