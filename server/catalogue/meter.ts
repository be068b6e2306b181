/**
 * The request meter's books: counts per metered storage and UTC day by class,
 * kept in memory (a map increment per request) and added to
 * `storage_requests` every few seconds and at shutdown, so a restart keeps the
 * day's count. The day is the UTC date string of the injectable clock: a
 * clock that jumps across midnight and back moves between two keys, so no day
 * is reset twice and no request is counted in both. Also the daily budget
 * (LIST+HEAD+GET; writes are counted, never budgeted) and the cost estimate.
 */
import type { Db } from '../db';
import { isBusy } from '../db/busy';
import { AppError } from '../errors';
import type { RequestCounts, StorageMeter } from '../contract';
import type { RequestSink } from '../storage';

export type { RequestCounts };
import type { StoragesRepo } from './storages.repo';
import { MeterRepo } from './meter.repo';
import type { StorageRef } from './storage-ref';

/** US dollars per 1,000 requests of each class, per driver name. */
export type PriceTable = Record<string, RequestCounts>;

/** Budgets above this are surely a typo (100 million requests a day). */
export const MAX_BUDGET = 100_000_000;
const FLUSH_MS = 5_000;
const DAY_MS = 86_400_000;
const zero = (): RequestCounts => ({ list: 0, head: 0, get: 0, put: 0 });
const CLASSES = ['list', 'head', 'get', 'put'] as const;
/** S3 Standard list prices (us-east-1): LIST and PUT-class $0.005, GET and HEAD $0.0004 per 1,000. Other drivers cost nothing per request unless the admin says so. */
export const DEFAULT_PRICES: PriceTable = { s3: { list: 0.005, head: 0.0004, get: 0.0004, put: 0.005 } };

export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const budgeted = (c: RequestCounts) => c.list + c.head + c.get;

interface Day {
  uid: string;
  day: string;
  /** The stored count (once `loaded`) plus what this process counted. */
  total: RequestCounts;
  /** Not yet added to the table. */
  pending: RequestCounts;
  /** The stored count is in `total`; `loading` while it is read. */
  loaded: boolean;
  loading?: Promise<void>;
}

export type MeterView = StorageMeter;

/** A storage's budget today by the meter's clock (what background work other than sync checks before spending). */
export interface BudgetDay {
  /** LIST+HEAD+GET of that day, persisted and pending, as counted at the moment it is read (a live count). */
  readonly used: number;
  budget: number;
  /** The UTC date on which a fresh budget starts, and how long until then by the meter's clock. */
  next_day: string;
  resets_in_ms: number;
}

export class RequestMeter {
  /** The clock (tests inject one). */
  now: () => number = Date.now;
  private days = new Map<string, Day>();
  private dirty = new Set<Day>();
  private timer?: NodeJS.Timeout;
  private books: MeterRepo;
  private budgetListeners: Array<(id: number) => void> = [];

  constructor(
    db: Db,
    private repo: StoragesRepo,
    private prices: () => PriceTable,
    /** Told of a failed timer flush that is not the database being busy (the counts stay pending either way). */
    private warn: (msg: string, e: unknown) => void = () => {},
  ) {
    this.books = new MeterRepo(db);
  }

  /** The manager's sink: null for `local` (no per-request cost), otherwise a counter for `uid`. */
  sink(uid: string, driver: string): RequestSink | null {
    if (driver === 'local') return null;
    return (cls) => {
      const d = this.day(uid, utcDay(this.now()));
      d.total[cls]++;
      d.pending[cls]++;
      this.dirty.add(d);
    };
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), FLUSH_MS);
    this.timer.unref();
  }

  stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.flush();
  }

  /**
   * The timer's flush: only when something is pending. Nothing may throw out of a timer (the process
   * would end): a database that is away (PostgreSQL's breaker, a held SQLite) or any other failure (a
   * storage another instance just deleted) keeps the counts for the next flush.
   */
  private async tick(): Promise<void> {
    if (!this.dirty.size) return;
    try {
      // A held database is not waited for: the next tick flushes.
      await this.flush(0);
    } catch (e) {
      if (!isBusy(e)) this.warn('request meter: flush failed, counts kept for the next one', e);
    }
  }

  /**
   * Adds pending counts to the table in one transaction (given back to pending if it fails); forgets past
   * days with nothing pending. The counts are taken before the transaction: requests counted while it runs
   * (PostgreSQL: during its round trips) stay pending for the next flush, never lost or counted twice.
   */
  async flush(waitMs?: number): Promise<void> {
    // A day's stored count is read before its first flush: that read must not see this process's own counts.
    for (const d of this.dirty) if (!d.loaded) d.loading ??= this.load(d);
    await Promise.all([...this.dirty].map((d) => d.loading));
    const today = utcDay(this.now());
    const sent: Array<{ d: Day; counts: RequestCounts; s: StorageRef }> = [];
    for (const d of this.dirty) {
      if (!d.loaded) continue; // the database is away: the next flush tries again
      const s = this.repo.ofAnyTenantByUid(d.uid);
      // A storage still being created has no row yet: its probe's requests wait for the next flush.
      if (!s) continue;
      sent.push({ d, counts: d.pending, s });
      d.pending = zero();
      this.dirty.delete(d);
    }
    try {
      await this.books.add(
        sent.map((x) => ({ storage_id: x.s.id, tenant_id: x.s.tenant_id, day: x.d.day, ...x.counts })),
        waitMs,
      );
    } catch (e) {
      for (const { d, counts } of sent) {
        for (const c of CLASSES) d.pending[c] += counts[c];
        this.dirty.add(d);
      }
      throw e;
    }
    for (const [k, d] of this.days) if (d.day !== today && !this.dirty.has(d)) this.days.delete(k);
  }

  /** Today's budgeted requests of storage `id` (persisted and pending). */
  async usedToday(id: number): Promise<number> {
    const s = this.repo.ofAnyTenant(id);
    if (!s) return 0;
    const d = this.day(s.uid, utcDay(this.now()));
    await d.loading;
    return budgeted(d.total);
  }

  /** Storage `id`'s daily budget (0: none, or no such storage), read in the storage's tenant. */
  async budget(id: number): Promise<number> {
    const s = this.repo.ofAnyTenant(id);
    return s ? this.books.budget(s) : 0;
  }

  /** Every stored budget by storage id (0: none), over every tenant's storages (system work). */
  budgets(): Promise<Map<number, number>> {
    return this.books.budgets(this.repo.tenants());
  }

  /** Stores the budget (0 = unlimited), shows or clears the "budget spent" reason at once and tells the listeners. */
  async setBudget(id: number, perDay: number): Promise<void> {
    const s = this.repo.ofAnyTenant(id);
    if (!s) throw new AppError('not_found', { storage_id: id });
    await this.books.setBudget(s, perDay);
    if (s.status !== 'offline') await this.repo.setStatus(s, id, 'online', await this.blocked(id));
    for (const f of this.budgetListeners) f(id);
  }

  /** Calls `f` after each change of a storage's budget in this process (work waiting on a spent budget may go on). */
  onBudgetChange(f: (id: number) => void): void {
    this.budgetListeners.push(f);
  }

  /**
   * Storage `id`'s budget today, or null when it has none. `used` reads the day's count when it is read, so
   * a caller comparing it with requests of its own in flight sees both at one moment.
   */
  async today(id: number): Promise<BudgetDay | null> {
    const budget = await this.budget(id);
    const s = this.repo.ofAnyTenant(id);
    if (budget <= 0 || !s) return null;
    const now = this.now();
    const next = Date.parse(`${utcDay(now)}T00:00:00Z`) + DAY_MS;
    const d = this.day(s.uid, utcDay(now));
    await d.loading;
    return {
      budget,
      next_day: utcDay(next),
      resets_in_ms: next - now,
      get used() {
        return budgeted(d.total);
      },
    };
  }

  /**
   * Why background sync of `id` must wait (null when it may run): the day's
   * budget is spent. User-initiated requests are never refused.
   */
  async blocked(id: number): Promise<string | null> {
    const budget = await this.budget(id);
    if (budget <= 0) return null;
    const used = await this.usedToday(id);
    if (used < budget) return null;
    const next = utcDay(Date.parse(`${utcDay(this.now())}T00:00:00Z`) + DAY_MS);
    return `request budget spent (${used} of ${budget} LIST/HEAD/GET today); background sync waits until ${next} 00:00 UTC`;
  }

  async view(id: number): Promise<MeterView> {
    const s = this.repo.ofAnyTenant(id);
    await this.flush();
    const today = utcDay(this.now());
    const since = utcDay(Date.parse(`${today}T00:00:00Z`) - 29 * DAY_MS);
    const days = s ? await this.books.days(s, since, today) : [];
    const prices = (s && (this.prices()[s.driver] ?? DEFAULT_PRICES[s.driver])) || zero();
    const week = utcDay(Date.parse(`${today}T00:00:00Z`) - 6 * DAY_MS);
    const recent = days.filter((d) => d.day >= week);
    const cost = (c: RequestCounts) => (c.list * prices.list + c.head * prices.head + c.get * prices.get + c.put * prices.put) / 1000;
    const daily = recent.length ? recent.reduce((a, d) => a + cost(d), 0) / recent.length : 0;
    const budget = await this.budget(id);
    const used = await this.usedToday(id);
    return {
      storage_id: id,
      today,
      used_today: used,
      budget_per_day: budget,
      exhausted: budget > 0 && used >= budget,
      days,
      prices,
      estimated_monthly_cost: Math.round(daily * 30 * 10_000) / 10_000,
    };
  }

  /** One line per metered storage for GET /api/admin/status. */
  async status(): Promise<Array<{ storage_id: number; name: string; used_today: number; budget_per_day: number; exhausted: boolean }>> {
    const metered = this.repo.everyTenant().filter((s) => s.driver !== 'local');
    const budgets = await this.books.budgets(this.repo.tenants());
    return Promise.all(
      metered.map(async (s) => {
        const used = await this.usedToday(s.id);
        const budget = budgets.get(s.id) ?? 0;
        return { storage_id: s.id, name: s.name, used_today: used, budget_per_day: budget, exhausted: budget > 0 && used >= budget };
      }),
    );
  }

  /**
   * The day's books. The first request of a storage on a day in this process starts them at zero (the
   * drivers' sink is synchronous) and reads what earlier runs and other instances stored, added to the
   * total when it comes; a failed read is tried again at the next use.
   */
  private day(uid: string, day: string): Day {
    const key = `${uid}|${day}`;
    let d = this.days.get(key);
    if (!d) {
      d = { uid, day, total: zero(), pending: zero(), loaded: false };
      this.days.set(key, d);
    }
    if (!d.loaded && !d.loading) d.loading = this.load(d);
    return d;
  }

  private async load(d: Day): Promise<void> {
    try {
      const s = this.repo.ofAnyTenantByUid(d.uid);
      const row = s && (await this.books.dayCounts(s, d.day));
      if (row) for (const c of CLASSES) d.total[c] += row[c];
      d.loaded = true;
    } catch {
      // The database is away: the total lacks the stored count until a later use reads it.
    } finally {
      d.loading = undefined;
    }
  }
}
