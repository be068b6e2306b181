/**
 * The whole-folder reads behind the in-memory listing indexes
 * (folder-index.ts) over the catalogue's `nodes` (read only; the catalogue
 * owns the table). Read once per folder generation, so SQL text (the count's
 * is snapshotted in test/architecture/hot-queries.sql) through `db.async`,
 * which prepares it once on SQLite.
 */
import type { Db } from '../db';
import type { Level } from '../catalogue';
import { entryJsonSql, lockJoin } from './entry';
import type { SortField } from './listing.types';

const COLUMN: Record<SortField, string | null> = { name: null, size: 'size', modified: 'mtime' };

/** A row of a folder: the entry's JSON, then its keyset (type, sort value, natural key, id). */
export type FolderRow = [string, 'dir' | 'file', number, string, number];

export class FolderIndexRepo {
  private texts = new Map<string, string>();

  constructor(private db: Db) {}

  /** How many live entries the folder has. */
  async size(storageId: number, dir: string): Promise<number> {
    const [[n]] = await this.db.async.sql<[number | string]>(
      'SELECT count(*) FROM nodes WHERE storage_id = ? AND dir = ? AND deleted_at IS NULL',
      [storageId, dir],
      {
        raw: true,
      },
    );
    return Number(n);
  }

  /**
   * Every live entry of the folder in ascending order: folders first, then the sort value, natural name,
   * id. `locks`: the storage may hold app locks (the entries then carry them).
   */
  rows(storageId: number, dir: string, sort: SortField, locks: boolean, perm: Level): Promise<FolderRow[]> {
    let text = this.texts.get(`${sort}:${locks}`);
    if (!text) {
      const col = COLUMN[sort];
      text = `SELECT ${entryJsonSql(this.db.dialect, locks)}, type, ${col ?? 0}, sort_key, id FROM nodes${locks ? lockJoin('nodes') : ''}
        WHERE storage_id = @s AND dir = @d AND deleted_at IS NULL ORDER BY type, ${col ? `${col}, ` : ''}sort_key, id`;
      this.texts.set(`${sort}:${locks}`, text);
    }
    return this.db.async.sql<FolderRow>(text, { s: storageId, d: dir, perm }, { raw: true });
  }
}
