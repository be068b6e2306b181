/**
 * Read-side queries of listings over the catalogue's `nodes` table (read
 * only; the catalogue owns the table). A page comes back as JSON text built by
 * SQLite, plus the sort keys of its last row for the keyset cursor.
 */
import type { Db } from '../db';
import type { Level, StorageRef } from '../catalogue';
import { entryJsonSql, lockJoin } from './entry';
import { FolderIndexes } from './folder-index';
import type { FolderRow } from './folder-index.repo';
import { afterParams, afterSql, listingOrder, SORT_COLUMN, type Keyset, type SortField } from './listing.types';

export type { Keyset, SortField } from './listing.types';

export interface PageQuery {
  storageId: number;
  /** The storage's tenant: its rows carry it (docs/tenants.md). */
  tenantId: number;
  dir: string;
  sort: SortField;
  desc: boolean;
  limit: number;
  offset: number;
  after?: Keyset;
  perm: Level;
  /** The folder's count when the caller knows it for the folder's current state (then it is not counted again). */
  total?: number;
}

export interface Page {
  /** JSON array text of the entries. */
  json: string;
  count: number;
  total: number;
  last?: Keyset;
}

const COUNT_SQL = 'SELECT count(*) FROM nodes WHERE tenant_id = @t AND storage_id = @s AND dir = @d AND deleted_at IS NULL';

function pageParams(q: Omit<PageQuery, 'total'>): Record<string, unknown> {
  const params: Record<string, unknown> = { t: q.tenantId, s: q.storageId, d: q.dir, perm: q.perm, limit: q.limit, offset: q.offset };
  if (q.after) Object.assign(params, afterParams(q.after));
  return params;
}

function pageOf(rows: FolderRow[], total: number): Page {
  const tail = rows[rows.length - 1];
  return {
    json: '[' + rows.map((r) => r[0]).join(',') + ']',
    count: rows.length,
    total,
    last: tail ? { type: tail[1], value: tail[2], key: tail[3], id: tail[4] } : undefined,
  };
}

/**
 * What every listing asks of its folder: its own row's type (null when there is none) and whether a child
 * exists, by two index lookups (`nodes_path`, `nodes_live_listing`). One `path = ? OR dir = ?` condition could
 * use neither index and walked the storage's rows in path order on every listing.
 */
export const PROBE_SQL = `SELECT (SELECT type FROM nodes WHERE tenant_id = @t AND storage_id = @s AND path = @p AND deleted_at IS NULL) AS type,
  EXISTS (SELECT 1 FROM nodes WHERE tenant_id = @t AND storage_id = @s AND dir = @p AND deleted_at IS NULL) AS child`;

/** A folder as the catalogue knows it: `known` when it has its own row or a child; `filled` when it has a child. */
export interface FolderProbe {
  type: 'dir' | 'file' | null;
  known: boolean;
  filled: boolean;
}

export class ListingRepo {
  /** Whole-folder indexes: pages of folders up to MAX_ENTRIES come from memory (folder-index.ts). */
  readonly indexes: FolderIndexes;

  /** `locked(storage)`: whether the storage may hold app locks (its pages then join them; FileLocks.any). */
  constructor(
    private db: Db,
    private locked: (storageId: number) => boolean = () => false,
  ) {
    this.indexes = new FolderIndexes(db, locked, (q) => this.rows(q));
  }

  /** The folder `dir` in the catalogue (a never-seen one is worth a short wait). */
  async probe(s: StorageRef, dir: string): Promise<FolderProbe> {
    const [[type, child]] = await this.db.async.sql<[FolderProbe['type'], unknown]>(PROBE_SQL, { t: s.tenant_id, s: s.id, p: dir }, { raw: true });
    return { type, known: type !== null || Boolean(child), filled: Boolean(child) };
  }

  /**
   * One page of a folder: folders first, then by the sort field, ties by natural name and id, all in the
   * chosen direction. With `after` the page starts `offset` rows behind that row (keyset: page 100 costs
   * what page 1 costs). The page and its count go side by side (PostgreSQL: on two pooled connections).
   */
  async page(q: PageQuery): Promise<Page> {
    const [rows, total] = await Promise.all([
      this.rows(q),
      q.total ?? this.db.async.sql<[number]>(COUNT_SQL, { t: q.tenantId, s: q.storageId, d: q.dir }, { raw: true }).then(([[n]]) => Number(n)),
    ]);
    return pageOf(rows, total);
  }

  /** A page's rows (each entry's JSON and keyset), without the folder's count. */
  rows(q: Omit<PageQuery, 'total'>): Promise<FolderRow[]> {
    const sql = pageSql(q.sort, q.desc, q.after?.type, this.locked(q.storageId), this.db.dialect);
    return this.db.async.sql<FolderRow>(sql, pageParams(q), { raw: true });
  }
}

/**
 * The page query: named parameters @t (the tenant), @s, @d, @perm, @limit, @offset, and with a
 * keyset of the previous page's last row's type @av, @ak, @ai. `locks`: the storage may hold app locks.
 */
export function pageSql(sort: SortField, desc: boolean, keyset?: 'dir' | 'file', locks = false, dialect: 'sqlite' | 'postgres' = 'sqlite'): string {
  const col = SORT_COLUMN[sort];
  const after = keyset ? afterSql(sort, desc, keyset) : '';
  return `SELECT ${entryJsonSql(dialect, locks)}, type, ${col ?? 0}, sort_key, id FROM nodes${locks ? lockJoin('nodes') : ''}
       WHERE nodes.tenant_id = @t AND storage_id = @s AND dir = @d AND deleted_at IS NULL${after}
       ORDER BY ${listingOrder(sort, desc)} LIMIT @limit OFFSET @offset`;
}
