/**
 * The S3 gateway's ListObjects pages over the catalogue's `nodes` (read only;
 * the catalogue owns the table), in S3's key order. Raw SQL like the other
 * listing hot paths (test/architecture/hot-queries.sql keeps its text): the
 * key expression and the empty-folder test run in the database.
 */
import type { Db } from '../../db';
import type { StorageRef } from '../../catalogue';

/** A listed row: its key (relative to the query's base) and what ListObjects shows of it. */
export interface KeyRow {
  k: string;
  type: 'dir' | 'file';
  size: number;
  mtime: number;
  etag: string | null;
}

const KEY = "CASE type WHEN 'dir' THEN name || '/' ELSE name END";
const CHILDREN_SQL = `SELECT ${KEY} AS k, type, size, mtime, etag FROM nodes
       WHERE tenant_id = ? AND storage_id = ? AND dir = ? AND deleted_at IS NULL AND ${KEY} > ? AND ${KEY} >= ? AND ${KEY} < ?
       ORDER BY k LIMIT ?`;
const PATH_KEY = "CASE n.type WHEN 'dir' THEN n.path || '/' ELSE n.path END";
const SUBTREE_SQL = `SELECT ${PATH_KEY} AS k, n.type, n.size, n.mtime, n.etag FROM nodes n
       WHERE n.tenant_id = @tid AND n.storage_id = @sid AND n.deleted_at IS NULL AND n.path >= @lo AND n.path < @hi
         AND (@base = '' OR n.path = @base OR (n.path >= @base || '/' AND n.path < @base || '0'))
         AND ${PATH_KEY} > @after AND ${PATH_KEY} >= @prefix AND ${PATH_KEY} < @prefix || @top
         AND (n.type = 'file' OR NOT EXISTS (SELECT 1 FROM nodes c WHERE c.tenant_id = n.tenant_id AND c.storage_id = n.storage_id AND c.dir = n.path AND c.deleted_at IS NULL))
       ORDER BY k LIMIT @limit`;

/**
 * A recursive page: files and empty folders of storage `sid` (of tenant `tid`) below `base`, keys in [`lo`, `hi`)
 * after `after` starting with `prefix`.
 */
export interface SubtreeQuery {
  sid: number;
  tid: number;
  lo: string;
  hi: string;
  base: string;
  after: string;
  prefix: string;
  /** The character that sorts after every other (`prefix + top` bounds the keys starting with `prefix`). */
  top: string;
  limit: number;
}

export class S3ListingRepo {
  constructor(private db: Db) {}

  /** The children of folder `dir` whose key (name, and `/` for a folder) is after `after` and in [`lo`, `hi`), in key order. */
  children(s: StorageRef, dir: string, after: string, lo: string, hi: string, limit: number): Promise<KeyRow[]> {
    return this.db.async.sql<KeyRow>(CHILDREN_SQL, [s.tenant_id, s.id, dir, after, lo, hi, limit]);
  }

  /** One recursive page (keys are whole paths, folders with a trailing `/`), in key order. */
  subtree(q: SubtreeQuery): Promise<KeyRow[]> {
    return this.db.async.sql<KeyRow>(SUBTREE_SQL, { ...q });
  }
}
