/**
 * `av_scans`: the last scan outcome per path (the protection module owns the
 * table; `antivirus.service.ts` scans and decides). One row per path, replaced
 * by each scan: a single upsert, no read before it.
 */
import type { Db } from '../db';
import type { AvScansTable } from '../db/tables';

export type AvScanRow = AvScansTable;

export class AvScansRepo {
  constructor(private db: Db) {}

  /** Records a scan's outcome for its path (replaces the path's earlier one). */
  async record(r: AvScanRow): Promise<void> {
    const { storage_id, path, ...rest } = r;
    await this.db.async.run(
      this.db.k
        .insertInto('av_scans')
        .values(r)
        .onConflict((oc) => oc.columns(['storage_id', 'path']).doUpdateSet(rest)),
    );
  }

  /** The last recorded outcome of a path, or undefined when it was never scanned. */
  outcome(storageId: number, path: string): Promise<Omit<AvScanRow, 'storage_id' | 'path'> | undefined> {
    return this.db.async.first(
      this.db.k
        .selectFrom('av_scans')
        .select(['state', 'signature', 'detail', 'written_at', 'scanned_at'])
        .where('storage_id', '=', storageId)
        .where('path', '=', path),
    );
  }
}
