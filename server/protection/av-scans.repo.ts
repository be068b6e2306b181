/**
 * `av_scans`: the last scan outcome per path (the protection module owns the
 * table; `antivirus.service.ts` scans and decides). One row per path, replaced
 * by each scan: a single upsert, no read before it. A row is written in its
 * storage's tenant and read only there (docs/tenants.md).
 */
import type { Db, TenantScope } from '../db';
import type { AvScansTable } from '../db/tables';

export type AvScanRow = Omit<AvScansTable, 'tenant_id'>;

export class AvScansRepo {
  constructor(private db: Db) {}

  /**
   * Records a scan's outcome for its path, in the tenant of its storage (replaces the path's earlier one,
   * never another tenant's: a path is one storage's, so that is only a caller naming the wrong tenant).
   */
  async record(s: TenantScope, r: AvScanRow): Promise<void> {
    const { storage_id, path, ...rest } = r;
    await this.db.async.run(
      this.db.k
        .insertInto('av_scans')
        .values({ ...r, tenant_id: s.tenant_id })
        .onConflict((oc) => oc.columns(['storage_id', 'path']).doUpdateSet(rest).where('av_scans.tenant_id', '=', s.tenant_id)),
    );
  }

  /** The last recorded outcome of a path, or undefined when it was never scanned (or is another tenant's). */
  outcome(s: TenantScope, storageId: number, path: string): Promise<Omit<AvScanRow, 'storage_id' | 'path'> | undefined> {
    return this.db.async.first(
      this.db.k
        .selectFrom('av_scans')
        .select(['state', 'signature', 'detail', 'written_at', 'scanned_at'])
        .where('tenant_id', '=', s.tenant_id)
        .where('storage_id', '=', storageId)
        .where('path', '=', path),
    );
  }
}
