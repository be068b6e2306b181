/**
 * The `versions` table (owner: protection): one row per snapshot kept in `.versions/`. The bytes are the
 * service's (storage I/O happens outside these methods, never inside a unit of work).
 */
import type { Db } from '../db';
import type { VersionsTable } from '../db/tables';
import type { Place } from '../files';

export type VersionRow = Omit<VersionsTable, 'id'> & { id: number };

export class VersionsRepo {
  constructor(private db: Db) {}

  /** Records a snapshot; the stored row. */
  async insert(v: Omit<VersionRow, 'id'>): Promise<VersionRow> {
    return (await this.db.async.first(this.db.k.insertInto('versions').values(v).returningAll())) as VersionRow;
  }

  /** The snapshots of one path, newest first ([] when none). */
  list(p: Place): Promise<VersionRow[]> {
    return this.db.async.all(this.newestFirst(p)) as Promise<VersionRow[]>;
  }

  /** Snapshot `id` when it belongs to `p`; undefined otherwise (unknown, or another file's). */
  async byId(p: Place, id: number): Promise<VersionRow | undefined> {
    return (await this.db.async.first(
      this.db.k.selectFrom('versions').selectAll().where('id', '=', id).where('storage_id', '=', p.storage_id).where('path', '=', p.rel),
    )) as VersionRow | undefined;
  }

  /** The snapshots of `p` beyond the newest `keep`, newest first. */
  beyond(p: Place, keep: number): Promise<VersionRow[]> {
    // SQLite takes OFFSET only after a LIMIT (-1: none); PostgreSQL refuses a negative one.
    const q = this.db.dialect === 'sqlite' ? this.newestFirst(p).limit(-1) : this.newestFirst(p);
    return this.db.async.all(q.offset(keep)) as Promise<VersionRow[]>;
  }

  /** Paths with more than `keep` snapshots. */
  over(keep: number): Promise<Array<{ storage_id: number; path: string }>> {
    return this.db.async.all(
      this.db.k
        .selectFrom('versions')
        .select(['storage_id', 'path'])
        .groupBy(['storage_id', 'path'])
        .having((eb) => eb.fn.countAll(), '>', keep),
    );
  }

  /** Forgets snapshots by id, in one statement; the rows removed (an id already gone counts 0). */
  async remove(ids: number[]): Promise<number> {
    return ids.length ? this.db.async.run(this.db.k.deleteFrom('versions').where('id', 'in', ids)) : 0;
  }

  private newestFirst(p: Place) {
    return this.db.k.selectFrom('versions').selectAll().where('storage_id', '=', p.storage_id).where('path', '=', p.rel).orderBy('id', 'desc');
  }
}
