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
import type { RequestCounts, StorageMeter } from '../contract';
import type { RequestSink } from '../storage';

export type { RequestCounts };
import type { StoragesRepo } from './storages.repo';

/** US dollars per 1,000 requests of each class, per driver name. */
export type PriceTable = Record<string, RequestCounts>;

/** Budgets above this are surely a typo (100 million requests a day). */
export const MAX_BUDGET = 100_000_000;
const FLUSH_MS = 5_000;
const DAY_MS = 86_400_000;
const zero = (): RequestCounts => ({ list: 0, head: 0, get: 0, put: 0 });
/** S3 Standard list prices (us-east-1): LIST and PUT-class $0.005, GET and HEAD $0.0004 per 1,000. Other drivers cost nothing per request unless the admin says so. */
export const DEFAULT_PRICES: PriceTable = { s3: { list: 0.005, head: 0.0004, get: 0.0004, put: 0.005 } };

export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const budgeted = (c: RequestCounts) => c.list + c.head + c.get;

interface Day {
  uid: string;
  day: string;
  total: RequestCounts;
  /** Not yet added to the table. */
  pending: RequestCounts;
}

export type MeterView = StorageMeter;

export class RequestMeter {
  /** The clock (tests inject one). */
  now: () => number = Date.now;
  private days = new Map<string, Day>();
  private dirty = new Set<Day>();
  private timer?: NodeJS.Timeout;

  constructor(
    private db: Db,
    private repo: StoragesRepo,
    private prices: () => PriceTable,
    /** Told of a failed timer flush that is not the database being busy (the counts stay pending either way). */
    private warn: (msg: string, e: unknown) => void = () => {},
  ) {}

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
    this.timer ??= setInterval(() => this.tick(), FLUSH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }

  /**
   * The timer's flush: only when something is pending. Nothing may throw out of a timer (the process
   * would end): a database that is away (PostgreSQL's breaker, a held SQLite) or any other failure (a
   * storage another instance just deleted) keeps the counts for the next flush.
   */
  private tick(): void {
    if (!this.dirty.size) return;
    try {
      this.flush();
    } catch (e) {
      if (!isBusy(e)) this.warn('request meter: flush failed, counts kept for the next one', e);
    }
  }

  /**
   * Adds pending counts to the table in one transaction (kept pending if it fails); forgets past days with
   * nothing pending. The columns are qualified: PostgreSQL calls a bare `list` ambiguous next to `excluded.list`.
   */
  flush(): void {
    const add = this.db.sqlite.prepare(
      `INSERT INTO storage_requests (storage_id, day, list, head, get, put) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(storage_id, day) DO UPDATE SET list = storage_requests.list + excluded.list, head = storage_requests.head + excluded.head,
         get = storage_requests.get + excluded.get, put = storage_requests.put + excluded.put`,
    );
    const today = utcDay(this.now());
    const added: Day[] = [];
    this.db.sqlite.transaction(() => {
      for (const d of this.dirty) {
        const id = this.repo.byUid(d.uid)?.id;
        // A storage still being created has no row yet: its probe's requests wait for the next flush.
        if (id === undefined) continue;
        add.run(id, d.day, d.pending.list, d.pending.head, d.pending.get, d.pending.put);
        added.push(d);
      }
    })();
    for (const d of added) {
      d.pending = zero();
      this.dirty.delete(d);
    }
    for (const [k, d] of this.days) if (d.day !== today && !this.dirty.has(d)) this.days.delete(k);
  }

  /** Today's budgeted requests of storage `id` (persisted and pending). */
  usedToday(id: number): number {
    const s = this.repo.byId(id);
    return s ? budgeted(this.day(s.uid, utcDay(this.now())).total) : 0;
  }

  budget(id: number): number {
    const r = this.db.sqlite.prepare('SELECT requests_per_day AS n FROM storage_budgets WHERE storage_id = ?').get(id) as { n: number } | undefined;
    return r?.n ?? 0;
  }

  /** Stores the budget (0 = unlimited) and shows or clears the "budget spent" reason at once. */
  setBudget(id: number, perDay: number): void {
    this.db.sqlite
      .prepare('INSERT INTO storage_budgets (storage_id, requests_per_day) VALUES (?, ?) ON CONFLICT(storage_id) DO UPDATE SET requests_per_day = excluded.requests_per_day')
      .run(id, perDay);
    const s = this.repo.byId(id);
    if (s && s.status !== 'offline') this.repo.setStatus(id, 'online', this.blocked(id));
  }

  /**
   * Why background sync of `id` must wait (null when it may run): the day's
   * budget is spent. User-initiated requests are never refused.
   */
  blocked(id: number): string | null {
    const budget = this.budget(id);
    if (budget <= 0) return null;
    const used = this.usedToday(id);
    if (used < budget) return null;
    const next = utcDay(Date.parse(`${utcDay(this.now())}T00:00:00Z`) + DAY_MS);
    return `request budget spent (${used} of ${budget} LIST/HEAD/GET today); background sync waits until ${next} 00:00 UTC`;
  }

  view(id: number): MeterView {
    const s = this.repo.byId(id);
    this.flush();
    const today = utcDay(this.now());
    const since = utcDay(Date.parse(`${today}T00:00:00Z`) - 29 * DAY_MS);
    const days = this.db.sqlite
      .prepare('SELECT day, list, head, get, put FROM storage_requests WHERE storage_id = ? AND day >= ? AND day <= ? ORDER BY day DESC')
      .all(id, since, today) as Array<{ day: string } & RequestCounts>;
    const prices = (s && (this.prices()[s.driver] ?? DEFAULT_PRICES[s.driver])) || zero();
    const week = utcDay(Date.parse(`${today}T00:00:00Z`) - 6 * DAY_MS);
    const recent = days.filter((d) => d.day >= week);
    const cost = (c: RequestCounts) => (c.list * prices.list + c.head * prices.head + c.get * prices.get + c.put * prices.put) / 1000;
    const daily = recent.length ? recent.reduce((a, d) => a + cost(d), 0) / recent.length : 0;
    const budget = this.budget(id);
    const used = this.usedToday(id);
    return {
      storage_id: id, today, used_today: used, budget_per_day: budget, exhausted: budget > 0 && used >= budget,
      days, prices, estimated_monthly_cost: Math.round(daily * 30 * 10_000) / 10_000,
    };
  }

  /** One line per metered storage for GET /api/admin/status. */
  status(): Array<{ storage_id: number; name: string; used_today: number; budget_per_day: number; exhausted: boolean }> {
    return this.repo
      .all()
      .filter((s) => s.driver !== 'local')
      .map((s) => {
        const used = this.usedToday(s.id);
        const budget = this.budget(s.id);
        return { storage_id: s.id, name: s.name, used_today: used, budget_per_day: budget, exhausted: budget > 0 && used >= budget };
      });
  }

  private day(uid: string, day: string): Day {
    const key = `${uid}|${day}`;
    let d = this.days.get(key);
    if (!d) {
      // First request of this storage on this day in this process: start from what earlier runs stored.
      const id = this.repo.byUid(uid)?.id;
      const row = id === undefined ? undefined : (this.db.sqlite.prepare('SELECT list, head, get, put FROM storage_requests WHERE storage_id = ? AND day = ?').get(id, day) as RequestCounts | undefined);
      d = { uid, day, total: row ? { list: row.list, head: row.head, get: row.get, put: row.put } : zero(), pending: zero() };
      this.days.set(key, d);
    }
    return d;
  }
}
