/**
 * The sync engine's reads and writes of `nodes` (the catalogue owns the
 * table; `sync.ts` holds the diffing). Synchronous for now and prepared once:
 * a batch of 1,000 entries is diffed and written inside one short
 * transaction (`write`), which on SQLite stays one synchronous block so
 * nothing interleaves with it, and a first sync of a million entries runs
 * these statements a million times.
 */
import { untilFree, type Db } from '../db';
import type { WalkEntry } from '../storage';
import { parentRel } from '../lib/paths';
import { sortKey } from './natural';

/** A node as the diff compares it with a walk entry. */
export type Existing = { id: number; path: string; type: string; size: number; mtime: number; etag: string | null };

/** A walk entry's row: what it stores besides the entry's own fields. */
export interface NewNode {
  e: WalkEntry;
  name: string;
  mime: string | null;
  mtime: number;
}

/** PostgreSQL's batch insert: one array per column (`insertMany`). */
const BULK_INSERT = `INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, etag, mime, sort_key, updated_at)
  SELECT CAST(? AS BIGINT), d, n, p, t, sz, mt, et, mi, sk, CAST(? AS TEXT)
  FROM unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]))
    AS u(d, n, p, t, sz, mt, et, mi, sk)
  ON CONFLICT (storage_id, path) DO NOTHING RETURNING id, path`;

export class SyncNodesRepo {
  private s;

  constructor(private db: Db) {
    const q = (sql: string) => db.sqlite.prepare(sql);
    this.s = {
      insert: q(`INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, etag, mime, sort_key, updated_at)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (storage_id, path) DO NOTHING`),
      update: q('UPDATE nodes SET type = ?, size = ?, mtime = ?, etag = ?, mime = ?, thumb_state = NULL, updated_at = ? WHERE id = ?'),
      count: q('SELECT count(*) AS n FROM nodes WHERE storage_id = ?'),
      ids: q('SELECT id, path, dir, type FROM nodes WHERE storage_id = ? AND path > ? ORDER BY path LIMIT 5000'),
      dirRows: q('SELECT id, path, type, size, mtime, etag FROM nodes WHERE storage_id = ? AND dir = ?'),
      row: q('SELECT id, updated_at FROM nodes WHERE storage_id = ? AND path = ?'),
      freshBelow: q('SELECT 1 FROM nodes WHERE storage_id = ? AND path >= ? AND path < ? AND updated_at >= ? LIMIT 1'),
    };
  }

  /**
   * One write transaction, BEGIN IMMEDIATE (a lock held elsewhere is met before `fn` runs, so a retry
   * never counts twice), retried off the event loop for up to `waitMs` while another program holds the database.
   */
  write(fn: () => void, waitMs: number): Promise<void> {
    const tx = this.db.sqlite.transaction(fn);
    return untilFree(() => tx.immediate(), waitMs);
  }

  count(storageId: number): number {
    return Number((this.s.count.get(storageId) as { n: number }).n);
  }

  /** The rows of one folder. */
  dirRows(storageId: number, dir: string): Existing[] {
    return this.s.dirRows.all(storageId, dir) as Existing[];
  }

  row(storageId: number, path: string): { id: number; updated_at: string | null } | undefined {
    return this.s.row.get(storageId, path) as { id: number; updated_at: string | null } | undefined;
  }

  /** Whether anything below folder `path` was written at or after `since`. */
  freshBelow(storageId: number, path: string, since: string): boolean {
    return this.s.freshBelow.get(storageId, path + '/', path + '0', since) !== undefined; // '0' follows '/'
  }

  /** The next 5,000 rows of the storage in path order after `after`. */
  idsAfter(storageId: number, after: string): Array<{ id: number; path: string; dir: string; type: string }> {
    return this.s.ids.all(storageId, after) as Array<{ id: number; path: string; dir: string; type: string }>;
  }

  /** One new row (SQLite: in-process, cheap); its id, or undefined when the row exists already. */
  insertOne(storageId: number, n: NewNode, now: string): number | undefined {
    const { e } = n;
    const ins = this.s.insert.run(
      storageId,
      parentRel(e.path),
      n.name,
      e.path,
      e.type,
      e.type === 'dir' ? 0 : e.size,
      n.mtime,
      e.etag ?? null,
      n.mime,
      sortKey(n.name),
      now,
    );
    return ins.changes === 0 ? undefined : Number(ins.lastInsertRowid);
  }

  /**
   * PostgreSQL: a batch's new rows in one statement, ids by path (rows that exist already are absent).
   * Row by row each costs two bridge round trips (the INSERT and `lastval()`): 2.9x SQLite's first sync.
   */
  insertMany(storageId: number, rows: NewNode[], now: string): Map<string, number> {
    const ids = new Map<string, number>();
    if (!rows.length) return ids;
    const col = <T>(f: (r: NewNode) => T) => rows.map(f);
    const got = this.db.sqlite.prepare(BULK_INSERT).all(
      storageId,
      now,
      col((r) => parentRel(r.e.path)),
      col((r) => r.name),
      col((r) => r.e.path),
      col((r) => r.e.type),
      col((r) => (r.e.type === 'dir' ? 0 : r.e.size)),
      col((r) => r.mtime),
      col((r) => r.e.etag ?? null),
      col((r) => r.mime),
      col((r) => sortKey(r.name)),
    ) as Array<{ id: number; path: string }>;
    for (const r of got) ids.set(r.path, r.id);
    return ids;
  }

  /** A row whose entry changed on the backend. */
  update(id: number, n: NewNode, now: string): void {
    const { e } = n;
    this.s.update.run(e.type, e.type === 'dir' ? 0 : e.size, n.mtime, e.etag ?? null, n.mime, now, id);
  }
}
