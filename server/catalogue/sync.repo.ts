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

/** `Existing`'s columns in `Q.dirRows`' order. */
type ExistingCells = [number, string, string, number, number, string | null];

/** A walk entry's row: what it stores besides the entry's own fields. */
export interface NewNode {
  e: WalkEntry;
  name: string;
  mime: string | null;
  mtime: number;
}

/**
 * Writes the parameters of one new row, in `Q.insert`'s order, into `out` from `at` (a chunk's rows go into one
 * array, with no array a row to flatten: a first sync inserts a million): a row carries its storage's tenant.
 */
function putValues(out: unknown[], at: number, s: StorageRef, n: NewNode, now: string): unknown[] {
  const { e } = n;
  out[at] = s.tenant_id;
  out[at + 1] = s.id;
  out[at + 2] = parentRel(e.path);
  out[at + 3] = n.name;
  out[at + 4] = e.path;
  out[at + 5] = e.type;
  out[at + 6] = e.type === 'dir' ? 0 : e.size;
  out[at + 7] = n.mtime;
  out[at + 8] = e.etag ?? null;
  out[at + 9] = n.mime;
  out[at + 10] = sortKey(n.name);
  out[at + 11] = now;
  return out;
}
const PER_ROW = 12;

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

  /**
   * The rows of the folders `dirs`, in one read (one index range scan per folder). Read as arrays: a re-sync
   * reads every row of the storage, and better-sqlite3 builds an array for a row in about half the time of an
   * object with named columns.
   */
  dirRows(s: StorageRef, dirs: Iterable<string>): Promise<Existing[]> {
    return this.db.async.read(function* (t) {
      const out: Existing[] = [];
      for (const dir of dirs)
        for (const [id, path, type, size, mtime, etag] of yield* t.sql<ExistingCells>(Q.dirRows, [s.tenant_id, s.id, dir], { raw: true }))
          out.push({ id, path, type, size, mtime, etag });
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
    const chunk = new Array<unknown>(SQLITE_CHUNK * PER_ROW);
    for (; i + SQLITE_CHUNK <= rows.length; i += SQLITE_CHUNK) {
      for (let j = 0; j < SQLITE_CHUNK; j++) putValues(chunk, j * PER_ROW, s, rows[i + j], now);
      took(yield* t.sql<{ id: number; path: string }>(Q.insertChunk, chunk));
    }
    for (; i < rows.length; i++) took(yield* t.sql<{ id: number; path: string }>(Q.insert, putValues([], 0, s, rows[i], now)));
    return ids;
  }

  /** A row of the storage `s` whose entry changed on the backend. */
  *updateIn(t: Tx, s: StorageRef, id: number, n: NewNode, now: string): Unit<void> {
    const { e } = n;
    yield* t.sql(Q.update, [e.type, e.type === 'dir' ? 0 : e.size, n.mtime, e.etag ?? null, n.mime, now, s.tenant_id, id]);
  }
}
