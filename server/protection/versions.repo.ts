/**
 * The `versions` table (owner: protection): one row per snapshot kept in `.versions/`. The bytes are the
 * service's (storage I/O happens outside these methods, never inside a unit of work). A snapshot is written
 * in its storage's tenant and every statement names the tenant (docs/tenants.md).
 */
import type { Db, TenantScope } from '../db';
import type { VersionsTable } from '../db/tables';
import type { Place } from '../files';

export type VersionRow = Omit<VersionsTable, 'id'> & { id: number };

export class VersionsRepo {
  constructor(private db: Db) {}

  /** Records a snapshot in the tenant of its storage; the stored row. */
  async insert(s: TenantScope, v: Omit<VersionRow, 'id' | 'tenant_id'>): Promise<VersionRow> {
    return (await this.db.async.first(
      this.db.k
        .insertInto('versions')
        .values({ ...v, tenant_id: s.tenant_id })
        .returningAll(),
    )) as VersionRow;
  }

  /** The snapshots of one path, newest first ([] when none, or another tenant's). */
  list(s: TenantScope, p: Place): Promise<VersionRow[]> {
    return this.db.async.all(this.newestFirst(s, p)) as Promise<VersionRow[]>;
  }

  /** Snapshot `id` when it belongs to `p` in the tenant; undefined otherwise (unknown, another file's or another tenant's). */
  async byId(s: TenantScope, p: Place, id: number): Promise<VersionRow | undefined> {
    return (await this.db.async.first(
      this.db.k
        .selectFrom('versions')
        .selectAll()
        .where('tenant_id', '=', s.tenant_id)
        .where('id', '=', id)
        .where('storage_id', '=', p.storage_id)
        .where('path', '=', p.rel),
    )) as VersionRow | undefined;
  }

  /** The snapshots of `p` beyond the newest `keep`, newest first. */
  beyond(s: TenantScope, p: Place, keep: number): Promise<VersionRow[]> {
    // SQLite takes OFFSET only after a LIMIT (-1: none); PostgreSQL refuses a negative one.
    const q = this.db.dialect === 'sqlite' ? this.newestFirst(s, p).limit(-1) : this.newestFirst(s, p);
    return this.db.async.all(q.offset(keep)) as Promise<VersionRow[]>;
  }

  /** The tenant's paths with more than `keep` snapshots. */
  over(s: TenantScope, keep: number): Promise<Array<{ storage_id: number; path: string }>> {
    return this.db.async.all(
      this.db.k
        .selectFrom('versions')
        .select(['storage_id', 'path'])
        .where('tenant_id', '=', s.tenant_id)
        .groupBy(['storage_id', 'path'])
        .having((eb) => eb.fn.countAll(), '>', keep),
    );
  }

  /** Forgets the tenant's snapshots by id, in one statement; the rows removed (an id already gone, or another tenant's, counts 0). */
  async remove(s: TenantScope, ids: number[]): Promise<number> {
    return ids.length ? this.db.async.run(this.db.k.deleteFrom('versions').where('tenant_id', '=', s.tenant_id).where('id', 'in', ids)) : 0;
  }

  private newestFirst(s: TenantScope, p: Place) {
    return this.db.k
      .selectFrom('versions')
      .selectAll()
      .where('tenant_id', '=', s.tenant_id)
      .where('storage_id', '=', p.storage_id)
      .where('path', '=', p.rel)
      .orderBy('id', 'desc');
  }
}
