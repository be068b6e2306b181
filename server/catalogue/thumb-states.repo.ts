/**
 * The thumbnail columns of `nodes` (thumb_state, thumb_error): the catalogue
 * owns the table, the thumbnails module drives the state machine through
 * this repository and touches nothing else of a node.
 */
import type { Db } from '../db';

export type ThumbState = 'pending' | 'ready' | 'skipped' | 'failed';

export interface ThumbNode {
  id: number;
  storage_id: number;
  path: string;
  name: string;
  type: 'file' | 'dir';
  size: number;
  mtime: number;
  mime: string | null;
  thumb_state: ThumbState | null;
  thumb_error: string | null;
  deleted_at: string | null;
}

export interface CandidateQuery {
  storageId?: number;
  retryFailed: boolean;
  retrySkipped: boolean;
  afterId: number;
  limit: number;
}

const COLS = 'id, storage_id, path, name, type, size, mtime, mime, thumb_state, thumb_error, deleted_at';

export class ThumbStates {
  private s;
  constructor(private db: Db) {
    const q = (sql: string) => db.sqlite.prepare(sql);
    this.s = {
      byId: q(`SELECT ${COLS} FROM nodes WHERE id = ?`),
      pending: q("UPDATE nodes SET thumb_state = 'pending', thumb_error = NULL WHERE id = ? AND type = 'file' AND IFNULL(thumb_state, '') != 'ready'"),
      finish: q('UPDATE nodes SET thumb_state = ?, thumb_error = ? WHERE id = ? AND size = ? AND mtime = ?'),
      pendingAfter: q(`SELECT id FROM nodes WHERE thumb_state = 'pending' AND type = 'file' AND deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?`),
    };
  }

  byId(id: number): ThumbNode | undefined {
    return this.s.byId.get(id) as ThumbNode | undefined;
  }

  /** Moves a file's state to `pending` unless it is `ready` (ready is never re-run). Returns whether it moved. */
  markPending(id: number): boolean {
    return this.s.pending.run(id).changes === 1;
  }

  /**
   * Records a run's outcome, only if the file still has the size and mtime the
   * run read: a write during the run already reset the state for a new run.
   */
  finish(id: number, state: Exclude<ThumbState, 'pending'>, error: string | null, seen: { size: number; mtime: number }): boolean {
    return this.s.finish.run(state, error === null ? null : error.slice(0, 1000), id, seen.size, seen.mtime).changes === 1;
  }

  /** The next batch of files the backfill should dispatch, in id order after `afterId`. Trashed and soft-deleted nodes are excluded. */
  candidates(q: CandidateQuery): ThumbNode[] {
    const states = ["thumb_state IS NULL", "thumb_state = 'pending'"];
    if (q.retryFailed) states.push("thumb_state = 'failed'");
    if (q.retrySkipped) states.push("thumb_state = 'skipped'");
    const args: unknown[] = [q.afterId];
    let storage = '';
    if (q.storageId !== undefined) {
      storage = ' AND storage_id = ?';
      args.push(q.storageId);
    }
    return this.db.sqlite
      .prepare(
        `SELECT ${COLS} FROM nodes WHERE id > ? AND type = 'file' AND deleted_at IS NULL${storage}
         AND path NOT LIKE '.service-trash/%' AND path NOT LIKE '.versions/%' AND path NOT LIKE '%/.versions/%' AND path NOT LIKE '%/.service-trash/%'
         AND (${states.join(' OR ')}) ORDER BY id LIMIT ?`,
      )
      .all(...args, q.limit) as ThumbNode[];
  }

  /** Moves each of `ids` to `pending` (one transaction; `ready` ones stay). Returns the ids that moved. */
  markPendingMany(ids: number[]): number[] {
    const moved: number[] = [];
    this.db.sqlite.transaction(() => {
      for (const id of ids) if (this.s.pending.run(id).changes === 1) moved.push(id);
    })();
    return moved;
  }

  /**
   * Up to `limit` live files waiting in `pending` with an id above `afterId`,
   * in id order: the durable backlog (files found by sync, and what a restart
   * interrupted) is paged from here instead of being held in memory.
   */
  pendingAfter(afterId: number, limit: number): number[] {
    return (this.s.pendingAfter.all(afterId, limit) as Array<{ id: number }>).map((r) => r.id);
  }

  /** Which of `ids` have a node row. Throws when the database cannot answer (the sweeper then deletes nothing). */
  existing(ids: number[]): Set<number> {
    const found = new Set<number>();
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      const rows = this.db.sqlite.prepare(`SELECT id FROM nodes WHERE id IN (${part.map(() => '?').join(',')})`).all(...part) as Array<{ id: number }>;
      for (const r of rows) found.add(r.id);
    }
    return found;
  }
}
