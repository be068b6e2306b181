/**
 * The request meter's tables (`storage_requests`, `storage_budgets`; the
 * catalogue owns them; meter.ts holds the books). Adding counts is one upsert
 * per storage and day that adds to the stored numbers, so instances flushing
 * at once never lose each other's counts.
 */
import type { Db } from '../db';
import type { RequestCounts } from '../contract';

/** Counts to add to one storage's day. */
export interface DayCounts extends RequestCounts {
  storage_id: number;
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
            .doUpdateSet((eb) => Object.fromEntries(COUNTS.map((c) => [c, eb(`storage_requests.${c}`, '+', eb.ref(`excluded.${c}`))]))),
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
  async dayCounts(storageId: number, day: string): Promise<RequestCounts | undefined> {
    const r = await this.db.async.first(this.db.k.selectFrom('storage_requests').select(COUNTS).where('storage_id', '=', storageId).where('day', '=', day));
    return r && num(r);
  }

  /** The stored days of one storage in [`since`, `until`], newest first. */
  async days(storageId: number, since: string, until: string): Promise<Array<{ day: string } & RequestCounts>> {
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('storage_requests')
        .select(['day', ...COUNTS])
        .where('storage_id', '=', storageId)
        .where('day', '>=', since)
        .where('day', '<=', until)
        .orderBy('day', 'desc'),
    );
    return rows.map((r) => ({ day: r.day, ...num(r) }));
  }

  /** The storage's daily budget (0: none). */
  async budget(storageId: number): Promise<number> {
    const r = await this.db.async.first(this.db.k.selectFrom('storage_budgets').select('requests_per_day').where('storage_id', '=', storageId));
    return Number(r?.requests_per_day ?? 0);
  }

  /** Every stored budget by storage id. */
  async budgets(): Promise<Map<number, number>> {
    const rows = await this.db.async.all(this.db.k.selectFrom('storage_budgets').select(['storage_id', 'requests_per_day']));
    return new Map(rows.map((r) => [Number(r.storage_id), Number(r.requests_per_day)]));
  }

  /** Stores the storage's daily budget (0: none). */
  async setBudget(storageId: number, perDay: number): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('storage_budgets')
        .values({ storage_id: storageId, requests_per_day: perDay })
        .onConflict((oc) => oc.column('storage_id').doUpdateSet((eb) => ({ requests_per_day: eb.ref('excluded.requests_per_day') }))),
    );
  }
}
