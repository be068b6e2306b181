/**
 * The whole-folder reads behind the in-memory listing indexes
 * (folder-index.ts) over the catalogue's `nodes` (read only; the catalogue
 * owns the table). Read once per folder generation, so SQL text (the count's
 * is snapshotted in test/architecture/hot-queries.sql) through `db.async`,
 * which prepares it once on SQLite.
 */
import type { Db } from '../db';
import type { Level, StorageRef } from '../catalogue';
import { entryJsonSql, lockJoin } from './entry';
import { listingOrder, SORT_COLUMN, type Keyset, type SortField } from './listing.types';

/** A row of a folder: the entry's JSON, then its keyset (type, sort value, natural key, id). */
export type FolderRow = [string, 'dir' | 'file', number, string, number];

export class FolderIndexRepo {
  private texts = new Map<string, string>();

  constructor(private db: Db) {}

  /** How many live entries the folder has. */
  async size(s: StorageRef, dir: string): Promise<number> {
    const [[n]] = await this.db.async.sql<[number | string]>(
      'SELECT count(*) FROM nodes WHERE tenant_id = ? AND storage_id = ? AND dir = ? AND deleted_at IS NULL',
      [s.tenant_id, s.id, dir],
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
  rows(s: StorageRef, dir: string, sort: SortField, locks: boolean, perm: Level): Promise<FolderRow[]> {
    let text = this.texts.get(`${sort}:${locks}`);
    if (!text) {
      const col = SORT_COLUMN[sort];
      text = `SELECT ${entryJsonSql(this.db.dialect, locks)}, type, ${col ?? 0}, sort_key, id FROM nodes${locks ? lockJoin('nodes') : ''}
        WHERE nodes.tenant_id = @t AND storage_id = @s AND dir = @d AND deleted_at IS NULL ORDER BY type, ${col ? `${col}, ` : ''}sort_key, id`;
      this.texts.set(`${sort}:${locks}`, text);
    }
    return this.db.async.sql<FolderRow>(text, { t: s.tenant_id, s: s.id, d: dir, perm }, { raw: true });
  }

  /**
   * The keysets of every `step`-th live entry of the folder in the listing's order (rows step, 2 step, …,
   * counted from 1): an offset page seeks to the one before it and steps over less than `step` rows.
   */
  async anchors(s: StorageRef, dir: string, sort: SortField, desc: boolean, step: number): Promise<Keyset[]> {
    const order = listingOrder(sort, desc);
    const rows = await this.db.async.sql<[Keyset['type'], number | string, string, number | string]>(
      `SELECT type, v, sort_key, id FROM (
         SELECT type, ${SORT_COLUMN[sort] ?? 0} AS v, sort_key, id, row_number() OVER (ORDER BY ${order}) AS rn
         FROM nodes WHERE tenant_id = @t AND storage_id = @s AND dir = @d AND deleted_at IS NULL) AS r
       WHERE rn % @step = 0 ORDER BY rn`,
      { t: s.tenant_id, s: s.id, d: dir, step },
      { raw: true },
    );
    return rows.map(([type, value, key, id]) => ({ type, value: Number(value), key, id: Number(id) }));
  }
}
