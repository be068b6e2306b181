/**
 * The tenants themselves (docs/tenants.md, "Who is who"), as the platform operator manages them: auth owns
 * the table (a tenant is who signs in where). Not a tenant's data, so no statement here names a tenant
 * scope. `db`'s `TenantsRepo.list()` stays the read-only list of scopes that sweeps in every layer walk.
 */
import type { Db } from '../db';

export type TenantStatus = 'active' | 'suspended';

/** A tenant as the platform routes show it; JSON columns parsed. */
export interface TenantRecord {
  id: number;
  slug: string;
  name: string;
  hostnames: string[];
  status: TenantStatus;
  quotas: Record<string, number>;
  branding: Record<string, string>;
  created_at: string;
}

type Stored = { id: number; slug: string; name: string; hostnames: string; status: TenantStatus; quotas: string; branding: string; created_at: string };

const recordOf = (r: Stored): TenantRecord => ({
  id: Number(r.id),
  slug: r.slug,
  name: r.name,
  hostnames: JSON.parse(r.hostnames) as string[],
  status: r.status,
  quotas: JSON.parse(r.quotas) as Record<string, number>,
  branding: JSON.parse(r.branding) as Record<string, string>,
  created_at: r.created_at,
});

export class TenantRecordsRepo {
  constructor(private db: Db) {}

  /** Every tenant, in id order (tenant 1 is always there: the migration seeds it). */
  async all(): Promise<TenantRecord[]> {
    const rows = await this.db.async.all(this.db.k.selectFrom('tenants').selectAll().orderBy('id'));
    return rows.map((r) => recordOf(r as Stored));
  }
}
