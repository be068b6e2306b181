/**
 * `file_locks` (the catalogue owns it; file-locks.ts holds the rules): apps'
 * locks on files, keyed by node id. Synchronous for now (issue 30 continues):
 * the file service's access check reads a lock on every write target
 * synchronously, and setting or clearing a lock runs in the service's write
 * transaction with the outbox record of the change, which is synchronous.
 * The statements are prepared once (the check is on the write path).
 */
import type { Db } from '../db';
import type { FileLock } from '../contract';
import { subtree, subtreeWhere } from './nodes.repo';

/** A stored lock. */
export interface LockRow extends FileLock {
  token_hash: string;
  locked_by: number | null;
  locked_at: string;
}

const COLS = 'l.plugin, l.plugin_label, l.reason, l.reason_text, l.until, l.token_hash, l.locked_by, l.locked_at';

export class FileLocksRepo {
  private s;

  constructor(db: Db) {
    const q = (sql: string) => db.sqlite.prepare(sql);
    this.s = {
      at: q(`SELECT ${COLS} FROM nodes n JOIN file_locks l ON l.node_id = n.id WHERE n.storage_id = ? AND n.path = ? AND n.deleted_at IS NULL`),
      below: q(`SELECT ${COLS}, n.path FROM file_locks l JOIN nodes n ON n.id = l.node_id
                WHERE ${subtreeWhere('n.')} AND (l.until IS NULL OR l.until > ?)`),
      put: q(`INSERT INTO file_locks (node_id, plugin, plugin_label, reason, reason_text, until, token_hash, locked_by, locked_at)
              VALUES (@node_id, @plugin, @plugin_label, @reason, @reason_text, @until, @token_hash, @locked_by, @locked_at)
              ON CONFLICT(node_id) DO UPDATE SET plugin = excluded.plugin, plugin_label = excluded.plugin_label, reason = excluded.reason,
                reason_text = excluded.reason_text, until = excluded.until, token_hash = excluded.token_hash, locked_by = excluded.locked_by, locked_at = excluded.locked_at`),
      drop: q('DELETE FROM file_locks WHERE node_id = ?'),
      due: q('SELECT n.storage_id, n.path, l.node_id FROM file_locks l JOIN nodes n ON n.id = l.node_id WHERE l.until IS NOT NULL AND l.until <= ?'),
      next: q('SELECT min(until) FROM file_locks WHERE until IS NOT NULL').pluck(),
      storages: q('SELECT DISTINCT n.storage_id FROM file_locks l JOIN nodes n ON n.id = l.node_id').pluck(),
    };
  }

  /** The lock on the live node at `rel` (expired ones too), or undefined. */
  at(storageId: number, rel: string): LockRow | undefined {
    return this.s.at.get(storageId, rel) as LockRow | undefined;
  }

  /** The locks at `rel` and below it not expired at `now` (ISO), with their paths ('' is the whole storage): one query. */
  below(storageId: number, rel: string, now: string): Array<LockRow & { path: string }> {
    return this.s.below.all(...subtree(storageId, rel), now) as Array<LockRow & { path: string }>;
  }

  /** Stores the node's lock, replacing the one it has. Call inside a write transaction. */
  put(nodeId: number, lock: LockRow): void {
    this.s.put.run({ node_id: nodeId, ...lock });
  }

  /** Removes the node's lock; false when it had none. */
  drop(nodeId: number): boolean {
    return this.s.drop.run(nodeId).changes > 0;
  }

  /** The locks expired at `now` (ISO), with where they are. */
  due(now: string): Array<{ storage_id: number; path: string; node_id: number }> {
    return this.s.due.all(now) as Array<{ storage_id: number; path: string; node_id: number }>;
  }

  /** The earliest expiry (ISO) of any lock, or null when none expires. */
  nextExpiry(): string | null {
    return (this.s.next.get() as string | null) ?? null;
  }

  /** The storages that hold any lock. */
  storages(): number[] {
    return (this.s.storages.all() as Array<number | string>).map(Number);
  }
}
