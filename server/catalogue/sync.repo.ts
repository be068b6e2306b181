/**
 * The sync engine's reads and writes of `nodes` (the catalogue owns the
 * table; `sync.ts` holds the diffing). A batch of 1,000 entries is diffed and
 * written inside one unit of work (`write`), so its statements are generators
 * (`*…In(t, …)`): on SQLite the unit is one synchronous IMMEDIATE transaction
 * (nothing interleaves with it, and a statement costs no promise: a first
 * sync of a million entries runs them a million times), on PostgreSQL one
 * pooled client between BEGIN and COMMIT. Reads outside a batch are async and
 * read a batch's folders in one call.
 */
import type { Db, Tx, Unit, UnitOptions } from '../db';
import type { WalkEntry } from '../storage';
import { parentRel } from '../lib/paths';
import { sortKey } from './natural';
import type { StorageRef } from './storage-ref';

/** A node as the diff compares it with a walk entry. */
export type Existing = { id: number; path: string; type: string; size: number; mtime: number; etag: string | null };

/** A walk entry's row: what it stores besides the entry's own fields. */
export interface NewNode {
  e: WalkEntry;
  name: string;
  mime: string | null;
  mtime: number;
}

/** The parameters of one new row in `Q.insert`'s order: a row carries its storage's tenant. */
const values = (s: StorageRef, n: NewNode, now: string): unknown[] => [
  s.tenant_id,
  s.id,
  parentRel(n.e.path),
  n.name,
  n.e.path,
  n.e.type,
  n.e.type === 'dir' ? 0 : n.e.size,
  n.mtime,
  n.e.etag ?? null,
  n.mime,
  sortKey(n.name),
  now,
];

/** PostgreSQL's batch insert: one array per column (`insertManyIn`). */
const BULK_INSERT = `INSERT INTO nodes (tenant_id, storage_id, dir, name, path, type, size, mtime, etag, mime, sort_key, updated_at)
  SELECT CAST(? AS BIGINT), CAST(? AS BIGINT), d, n, p, t, sz, mt, et, mi, sk, CAST(? AS TEXT)
  FROM unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]))
    AS u(d, n, p, t, sz, mt, et, mi, sk)
  ON CONFLICT (storage_id, path) DO NOTHING RETURNING id, path`;

/** SQLite: new rows a statement in a batch insert (12 parameters each). */
const SQLITE_CHUNK = 50;
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const INSERT = 'INSERT INTO nodes (tenant_id, storage_id, dir, name, path, type, size, mtime, etag, mime, sort_key, updated_at) VALUES';
const Q = {
  insert: `${INSERT} ${ROW} ON CONFLICT (storage_id, path) DO NOTHING RETURNING id, path`,
  insertChunk: `${INSERT} ${Array(SQLITE_CHUNK).fill(ROW).join(', ')} ON CONFLICT (storage_id, path) DO NOTHING RETURNING id, path`,
  update: 'UPDATE nodes SET type = ?, size = ?, mtime = ?, etag = ?, mime = ?, thumb_state = NULL, updated_at = ? WHERE tenant_id = ? AND id = ?',
  // Every row of a storage carries the storage's tenant: the tenant is checked on the storage's row, so the count
  // stays inside nodes_path (index-only; a tenant_id term read every row of the storage).
  count: 'SELECT count(*) AS n FROM nodes WHERE storage_id = ? AND EXISTS (SELECT 1 FROM storages WHERE tenant_id = ? AND id = ?)',
  ids: 'SELECT id, path, dir, type FROM nodes WHERE tenant_id = ? AND storage_id = ? AND path > ? ORDER BY path LIMIT 5000',
  dirRows: 'SELECT id, path, type, size, mtime, etag FROM nodes WHERE tenant_id = ? AND storage_id = ? AND dir = ?',
  row: 'SELECT id, updated_at FROM nodes WHERE tenant_id = ? AND storage_id = ? AND path = ?',
  freshBelow: 'SELECT 1 FROM nodes WHERE tenant_id = ? AND storage_id = ? AND path >= ? AND path < ? AND updated_at >= ? LIMIT 1',
};

export class SyncNodesRepo {
  constructor(private db: Db) {}

  /**
   * One unit of work (SQLite: BEGIN IMMEDIATE, so a lock held elsewhere is met before `body` runs),
   * retried off the event loop for up to `waitMs` while another program holds the database.
   * `isolation`: PostgreSQL's, for a unit that decides on rows the write gate may change meanwhile.
   */
  write<T>(body: (t: Tx) => Unit<T>, waitMs: number, isolation?: UnitOptions['isolation']): Promise<T> {
    return this.db.async.unit(body, { waitMs, isolation });
  }

  async count(s: StorageRef): Promise<number> {
    return Number((await this.db.async.sql<{ n: number | string }>(Q.count, [s.id, s.tenant_id, s.id]))[0].n);
  }

  /** The rows of the folders `dirs`, in one read (one index range scan per folder). */
  dirRows(s: StorageRef, dirs: Iterable<string>): Promise<Existing[]> {
    return this.db.async.read(function* (t) {
      const out: Existing[] = [];
      for (const dir of dirs) for (const r of yield* t.sql<Existing>(Q.dirRows, [s.tenant_id, s.id, dir])) out.push(r);
      return out;
    });
  }

  *rowIn(t: Tx, s: StorageRef, path: string): Unit<{ id: number; updated_at: string | null } | undefined> {
    return (yield* t.sql<{ id: number; updated_at: string | null }>(Q.row, [s.tenant_id, s.id, path]))[0];
  }

  /** Whether anything below folder `path` was written at or after `since`. */
  *freshBelowIn(t: Tx, s: StorageRef, path: string, since: string): Unit<boolean> {
    return (yield* t.sql(Q.freshBelow, [s.tenant_id, s.id, path + '/', path + '0', since])).length > 0; // '0' follows '/'
  }

  /** The next 5,000 rows of the storage in path order after `after`. */
  idsAfter(s: StorageRef, after: string): Promise<Array<{ id: number; path: string; dir: string; type: string }>> {
    return this.db.async.sql(Q.ids, [s.tenant_id, s.id, after]);
  }

  /**
   * A batch's new rows, ids by path (rows that exist already are absent). PostgreSQL: one statement (row by row
   * each cost a round trip: 2.9x SQLite's first sync). SQLite: SQLITE_CHUNK rows a statement, the rest one by
   * one; a statement a row was 40 % of a first sync's main thread, and a chunk halves that cost.
   */
  *insertManyIn(t: Tx, s: StorageRef, rows: NewNode[], now: string): Unit<Map<string, number>> {
    const ids = new Map<string, number>();
    if (!rows.length) return ids;
    const took = (got: Array<{ id: number; path: string }>) => {
      for (const r of got) ids.set(r.path, Number(r.id));
    };
    if (this.db.dialect === 'postgres') {
      const col = <T>(f: (r: NewNode) => T) => rows.map(f);
      took(
        yield* t.sql<{ id: number; path: string }>(BULK_INSERT, [
          s.tenant_id,
          s.id,
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
        ]),
      );
      return ids;
    }
    let i = 0;
    for (; i + SQLITE_CHUNK <= rows.length; i += SQLITE_CHUNK)
      took(
        yield* t.sql<{ id: number; path: string }>(
          Q.insertChunk,
          rows.slice(i, i + SQLITE_CHUNK).flatMap((r) => values(s, r, now)),
        ),
      );
    for (; i < rows.length; i++) took(yield* t.sql<{ id: number; path: string }>(Q.insert, values(s, rows[i], now)));
    return ids;
  }

  /** A row of the storage `s` whose entry changed on the backend. */
  *updateIn(t: Tx, s: StorageRef, id: number, n: NewNode, now: string): Unit<void> {
    const { e } = n;
    yield* t.sql(Q.update, [e.type, e.type === 'dir' ? 0 : e.size, n.mtime, e.etag ?? null, n.mime, now, s.tenant_id, id]);
  }
}
