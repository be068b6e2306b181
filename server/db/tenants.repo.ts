/**
 * The tenants themselves (docs/tenants.md; owner: db until step 2 gives tenants their service): not a
 * tenant's data, so no statement here names one. Step 2 adds creating, suspending and deleting them.
 */
import type { Db } from './index';
import type { TenantScope } from './tenant-tables';

export class TenantsRepo {
  constructor(private db: Db) {}

  /** Every tenant, in id order, as the scope its work runs in (tenant 1 is always there: the migration seeds it). */
  async list(): Promise<TenantScope[]> {
    const rows = await this.db.async.all(this.db.k.selectFrom('tenants').select('id').orderBy('id'));
    return rows.map((r) => ({ tenant_id: Number(r.id) }));
  }
}
