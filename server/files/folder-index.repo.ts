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
import { afterParams, afterSql, listingOrder, SORT_COLUMN, type Keyset, type SortField } from './listing.types';

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
   * One statement per anchor, each stepping over `step` rows from the one before, with the event loop let
   * go between them: one window query over a 100,000-entry folder held the loop for 300 ms (issue 38).
   */
  async anchors(s: StorageRef, dir: string, sort: SortField, desc: boolean, step: number): Promise<Keyset[]> {
    const col = SORT_COLUMN[sort];
    const text = (after?: 'dir' | 'file') =>
      `SELECT type, ${col ?? 0}, sort_key, id FROM nodes WHERE tenant_id = @t AND storage_id = @s AND dir = @d AND deleted_at IS NULL${
        after ? afterSql(sort, desc, after) : ''
      } ORDER BY ${listingOrder(sort, desc)} LIMIT 1 OFFSET @skip`;
    const out: Keyset[] = [];
    for (;;) {
      const last = out.at(-1);
      const [row] = await this.db.async.sql<[Keyset['type'], number | string, string, number | string]>(
        text(last?.type),
        { t: s.tenant_id, s: s.id, d: dir, skip: step - 1, ...(last && afterParams(last)) },
        { raw: true },
      );
      if (!row) return out;
      out.push({ type: row[0], value: Number(row[1]), key: row[2], id: Number(row[3]) });
      await new Promise((r) => setImmediate(r));
    }
  }
}
