/**
 * The whole-folder reads behind the in-memory listing indexes
 * (folder-index.ts) over the catalogue's `nodes` (read only; the catalogue
 * owns the table). Synchronous for now (issue 30 continues): a page served
 * from an index is built on the listing's hot path without a promise, and the
 * statements are prepared once (the count's text is snapshotted in
 * test/architecture/hot-queries.sql).
 */
import type { Db, Statement } from '../db';
import type { Level } from '../catalogue';
import { entryJsonSql, lockJoin } from './entry';
import type { SortField } from './listing.types';

const COLUMN: Record<SortField, string | null> = { name: null, size: 'size', modified: 'mtime' };

/** A row of a folder: the entry's JSON, then its keyset (type, sort value, natural key, id). */
export type FolderRow = [string, 'dir' | 'file', number, string, number];

export class FolderIndexRepo {
  private count: Statement;
  private stmts = new Map<string, Statement>();

  constructor(private db: Db) {
    this.count = db.sqlite.prepare('SELECT count(*) FROM nodes WHERE storage_id = ? AND dir = ? AND deleted_at IS NULL').pluck();
  }

  /** How many live entries the folder has. */
  size(storageId: number, dir: string): number {
    return Number(this.count.get(storageId, dir));
  }

  /**
   * Every live entry of the folder in ascending order: folders first, then the sort value, natural name,
   * id. `locks`: the storage may hold app locks (the entries then carry them).
   */
  rows(storageId: number, dir: string, sort: SortField, locks: boolean, perm: Level): FolderRow[] {
    let stmt = this.stmts.get(`${sort}:${locks}`);
    if (!stmt) {
      const col = COLUMN[sort];
      stmt = this.db.sqlite
        .prepare(`SELECT ${entryJsonSql(this.db.dialect, locks)}, type, ${col ?? 0}, sort_key, id FROM nodes${locks ? lockJoin('nodes') : ''}
        WHERE storage_id = @s AND dir = @d AND deleted_at IS NULL ORDER BY type, ${col ? `${col}, ` : ''}sort_key, id`)
        .raw();
      this.stmts.set(`${sort}:${locks}`, stmt);
    }
    return stmt.all({ s: storageId, d: dir, perm }) as FolderRow[];
  }
}
