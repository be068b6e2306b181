/**
 * `file_locks` (the catalogue owns it; file-locks.ts holds the rules): apps' locks on files, keyed by node
 * id. On `db.async`: setting, clearing and sweeping locks are units of work with the outbox record of each
 * change; the rules decide through callbacks inside them. The access check reads no statement: FileLocks
 * keeps every lock in memory (`all` reads them) and checks from there.
 */
import type { Db } from '../db';
import type { Tx } from '../db/async';
import type { EventBus } from '../events';
import type { FileLock } from '../contract';
import { NodesRepo, type NodeRow } from './nodes.repo';
import type { GateEvent } from './gate.repo';

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
  at: `SELECT ${COLS} FROM nodes n JOIN file_locks l ON l.node_id = n.id WHERE n.storage_id = ? AND n.path = ? AND n.deleted_at IS NULL`,
  all: `SELECT ${COLS}, l.node_id, n.storage_id, n.path FROM file_locks l JOIN nodes n ON n.id = l.node_id WHERE n.deleted_at IS NULL`,
  put: `INSERT INTO file_locks (node_id, plugin, plugin_label, reason, reason_text, until, token_hash, locked_by, locked_at)
              VALUES (@node_id, @plugin, @plugin_label, @reason, @reason_text, @until, @token_hash, @locked_by, @locked_at)
              ON CONFLICT(node_id) DO UPDATE SET plugin = excluded.plugin, plugin_label = excluded.plugin_label, reason = excluded.reason,
                reason_text = excluded.reason_text, until = excluded.until, token_hash = excluded.token_hash, locked_by = excluded.locked_by, locked_at = excluded.locked_at`,
  drop: 'DELETE FROM file_locks WHERE node_id = ? RETURNING node_id',
  due: 'SELECT n.storage_id, n.path, l.node_id FROM file_locks l JOIN nodes n ON n.id = l.node_id WHERE l.until IS NOT NULL AND l.until <= ?',
};

type Due = { storage_id: number; path: string; node_id: number };

export class FileLocksRepo {
  private nodes: NodesRepo;
  constructor(
    private db: Db,
    private bus: EventBus,
  ) {
    this.nodes = new NodesRepo(db);
  }

  private *recordIn(t: Tx, events: GateEvent[]) {
    for (const [event, payload] of events) yield* this.bus.recordIn(t, event, payload as never);
  }

  /**
   * Stores `lock` on the file at `rel` with `events`, in one serializable unit (two apps locking one file
   * at once both read "no lock": one of them must be refused). `decide` sees the node and its current lock
   * and returns the node id to lock, or throws to refuse.
   */
  set(
    storageId: number,
    rel: string,
    lock: LockRow,
    decide: (node: NodeRow | undefined, held: LockRow | undefined) => number,
    events: GateEvent[],
  ): Promise<void> {
    const self = this;
    return this.db.async.unit(
      function* (t) {
        const nodeId = decide(yield* self.nodes.getIn(t, storageId, rel), yield* self.atIn(t, storageId, rel));
        yield* self.putIn(t, nodeId, lock);
        yield* self.recordIn(t, events);
      },
      { isolation: 'serializable' },
    );
  }

  /**
   * Removes the lock on the file at `rel` when `decide` (seeing the lock) says so, with `events`, in one
   * unit; whether a lock went (the delete is conditional: two clears racing clear once). `decide` may throw to refuse.
   */
  clear(storageId: number, rel: string, decide: (held: LockRow | undefined) => boolean, events: GateEvent[]): Promise<boolean> {
    const self = this;
    return this.db.async.unit(function* (t) {
      if (!decide(yield* self.atIn(t, storageId, rel))) return false;
      const node = yield* self.nodes.getIn(t, storageId, rel);
      const gone = !!node && (yield* self.dropIn(t, node.id));
      if (gone) yield* self.recordIn(t, events);
      return gone;
    });
  }

  /** Removes the locks expired at `now` (ISO), recording `eventsOf` each, in one unit; how many went. */
  sweep(now: string, eventsOf: (r: Due) => GateEvent[]): Promise<number> {
    const self = this;
    return this.db.async.unit(function* (t) {
      let n = 0;
      for (const r of yield* self.dueIn(t, now)) {
        // Conditional: of two instances sweeping at once, one tells each folder.
        if (!(yield* self.dropIn(t, r.node_id))) continue;
        yield* self.recordIn(t, eventsOf(r));
        n++;
      }
      return n;
    });
  }

  /** The lock on the live node at `rel` (expired ones too), or undefined. */
  *atIn(t: Tx, storageId: number, rel: string) {
    return (yield* t.sql<LockRow>(Q.at, [storageId, rel]))[0] as LockRow | undefined;
  }

  /** Stores the node's lock, replacing the one it has. */
  *putIn(t: Tx, nodeId: number, lock: LockRow) {
    yield* t.sql(Q.put, { node_id: nodeId, ...lock });
  }

  /** Removes the node's lock; false when it had none. */
  *dropIn(t: Tx, nodeId: number) {
    return (yield* t.sql(Q.drop, [nodeId])).length > 0;
  }

  /** The locks expired at `now` (ISO), with where they are. */
  *dueIn(t: Tx, now: string) {
    return (yield* t.sql<Due>(Q.due, [now])).map((r) => ({ storage_id: Number(r.storage_id), path: r.path, node_id: Number(r.node_id) }));
  }

  /** Every lock on a live node (expired ones too: the rules decide), with where it is; one statement. */
  async all(): Promise<PlacedLock[]> {
    const rows = await this.db.async.sql<PlacedLock>(Q.all);
    return rows.map((r) => ({
      ...r,
      node_id: Number(r.node_id),
      storage_id: Number(r.storage_id),
      locked_by: r.locked_by === null ? null : Number(r.locked_by),
    }));
  }
}
