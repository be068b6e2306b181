/**
 * The request meter's tables (`storage_requests`, `storage_budgets`; the
 * catalogue owns them; meter.ts holds the books). Adding counts is one upsert
 * per storage and day that adds to the stored numbers, so instances flushing
 * at once never lose each other's counts.
 */
import type { Db, TenantScope } from '../db';
import type { RequestCounts } from '../contract';
import type { StorageRef } from './storage-ref';

/** Counts to add to one storage's day (the row carries its storage's tenant). */
export interface DayCounts extends RequestCounts {
  storage_id: number;
  tenant_id: number;
  day: string;
}

const COUNTS = ['list', 'head', 'get', 'put'] as const;
const num = (c: RequestCounts): RequestCounts => ({ list: Number(c.list), head: Number(c.head), get: Number(c.get), put: Number(c.put) });

export class MeterRepo {
  constructor(private db: Db) {}

  /** Adds the counts to their days in one transaction (all or none). `waitMs`: how long a held database is waited for. */
  async add(rows: DayCounts[], waitMs?: number): Promise<void> {
    if (!rows.length) return;
    // Qualified columns: PostgreSQL calls a bare `list` ambiguous next to `excluded.list`.
    const upserts = rows.map((r) =>
      this.db.k
        .insertInto('storage_requests')
        .values(r)
        .onConflict((oc) =>
          oc
            .columns(['storage_id', 'day'])
            .doUpdateSet((eb) => Object.fromEntries(COUNTS.map((c) => [c, eb(`storage_requests.${c}`, '+', eb.ref(`excluded.${c}`))])))
            // A row of another tenant's storage is never added to (a child carries its storage's tenant).
            .where('storage_requests.tenant_id', '=', r.tenant_id),
        ),
    );
    await this.db.async.unit(
      function* (t) {
        for (const q of upserts) yield* t.run(q);
      },
      { waitMs },
    );
  }

  /** The stored counts of one storage's day, or undefined. */
  async dayCounts(s: StorageRef, day: string): Promise<RequestCounts | undefined> {
    const r = await this.db.async.first(
      this.db.k.selectFrom('storage_requests').select(COUNTS).where('tenant_id', '=', s.tenant_id).where('storage_id', '=', s.id).where('day', '=', day),
    );
    return r && num(r);
  }

  /** The stored days of one storage in [`since`, `until`], newest first. */
  async days(s: StorageRef, since: string, until: string): Promise<Array<{ day: string } & RequestCounts>> {
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('storage_requests')
        .select(['day', ...COUNTS])
        .where('tenant_id', '=', s.tenant_id)
        .where('storage_id', '=', s.id)
        .where('day', '>=', since)
        .where('day', '<=', until)
        .orderBy('day', 'desc'),
    );
    return rows.map((r) => ({ day: r.day, ...num(r) }));
  }

  /** The storage's daily budget (0: none). */
  async budget(s: StorageRef): Promise<number> {
    const r = await this.db.async.first(
      this.db.k.selectFrom('storage_budgets').select('requests_per_day').where('tenant_id', '=', s.tenant_id).where('storage_id', '=', s.id),
    );
    return Number(r?.requests_per_day ?? 0);
  }

  /** Every stored budget of the tenants by storage id (none given: none). */
  async budgets(tenants: readonly TenantScope[]): Promise<Map<number, number>> {
    if (!tenants.length) return new Map();
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('storage_budgets')
        .select(['storage_id', 'requests_per_day'])
        .where(
          'tenant_id',
          'in',
          tenants.map((t) => t.tenant_id),
        ),
    );
    return new Map(rows.map((r) => [Number(r.storage_id), Number(r.requests_per_day)]));
  }

  /** Stores the storage's daily budget (0: none). */
  async setBudget(s: StorageRef, perDay: number): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('storage_budgets')
        .values({ tenant_id: s.tenant_id, storage_id: s.id, requests_per_day: perDay })
        .onConflict((oc) =>
          oc
            .column('storage_id')
            .doUpdateSet((eb) => ({ requests_per_day: eb.ref('excluded.requests_per_day') }))
            .where('storage_budgets.tenant_id', '=', s.tenant_id),
        ),
    );
  }
}
