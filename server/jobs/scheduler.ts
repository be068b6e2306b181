/**
 * Recurring work: fixed intervals (`every`) and cron expressions (`cron`).
 * The last run of each schedule is kept in `cron_state`, so a schedule that
 * was due while the service was down runs shortly after boot, once.
 *
 * Once per schedule across instances sharing the database (docs/operations.md,
 * "Several instances"): a schedule is armed from the `last_run_at` it read;
 * firing is a check-and-set, `UPDATE … SET last_run_at = now WHERE name = ?
 * AND last_run_at = <the value it armed from>`. Of several instances armed
 * from the same value exactly one changes the row and runs; the others see
 * the new value and re-arm from it. Portable (both dialects), no lock held.
 */
import { isBusy, type Sqlite } from '../db';
import { nextRun, parseCron, type CronSpec } from './cron';

interface Entry {
  name: string;
  /** The `last_run_at` this entry was armed from (null: the row could not be read or seeded). */
  armedFrom?: string | null;
  due: (last: Date | null) => Date;
  fn: () => Promise<void> | void;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

export class Scheduler {
  private entries = new Map<string, Entry>();
  private stopped = false;

  constructor(private sqlite: Sqlite, private log: (msg: string, err?: unknown) => void = () => {}) {}

  /** Runs `fn` every `ms` (0 or less disables it); the first run is `ms` after the last recorded one. */
  every(name: string, ms: number, fn: () => Promise<void> | void): void {
    if (ms <= 0) return this.remove(name);
    this.add({ name, fn, due: (last) => new Date(Math.max(Date.now() + 1000, (last?.getTime() ?? Date.now()) + ms)) });
  }

  /** Runs `fn` on a cron expression (see cron.ts), read in `timezone` when given; throws on a bad expression or zone. */
  cron(name: string, expr: string, fn: () => Promise<void> | void, timezone?: string): void {
    const spec: CronSpec = parseCron(expr, timezone);
    this.add({ name, fn, due: (last) => {
      const next = nextRun(spec, last ?? new Date());
      return next.getTime() < Date.now() ? new Date(Date.now() + 1000) : next;
    } });
  }

  remove(name: string): void {
    const e = this.entries.get(name);
    if (e?.timer) clearTimeout(e.timer);
    this.entries.delete(name);
  }

  /** Runs a schedule now (admin "run now" buttons, tests). */
  async runNow(name: string): Promise<void> {
    const e = this.entries.get(name);
    if (e) await this.fire(e);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
    await Promise.allSettled([...this.entries.values()].map((e) => e.running));
  }

  private add(e: Entry): void {
    this.remove(e.name);
    this.entries.set(e.name, e);
    this.arm(e);
  }

  /**
   * The schedule's recorded last run; a schedule seen for the first time is seeded with now (its first run is
   * then due as before: `ms` after now, or the expression's next time), so every instance arms from one value.
   */
  private lastRun(name: string): string | null {
    const read = () => (this.sqlite.prepare('SELECT last_run_at FROM cron_state WHERE name = ?').get(name) as { last_run_at: string } | undefined)?.last_run_at;
    try {
      let last = read();
      if (last === undefined) {
        this.sqlite.prepare('INSERT INTO cron_state (name, last_run_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, new Date().toISOString());
        last = read();
      }
      return last ?? null;
    } catch (err) {
      // A database held by another program: arm from now; the fire claims with an upsert.
      if (!isBusy(err)) throw err;
      return null;
    }
  }

  private arm(e: Entry): void {
    if (this.stopped) return;
    e.armedFrom = this.lastRun(e.name);
    const at = e.due(e.armedFrom === null ? null : new Date(e.armedFrom));
    // Timers cap at ~24.8 days; re-arm in steps.
    const wait = Math.min(Math.max(0, at.getTime() - Date.now()), 2 ** 31 - 1);
    e.timer = setTimeout(() => (Date.now() >= at.getTime() ? this.fire(e, true).then(() => this.arm(e)) : this.arm(e)), wait);
    e.timer.unref();
  }

  /** Records the run and runs it; a scheduled fire (`claim`) runs only when its check-and-set wins. */
  private async fire(e: Entry, claim = false): Promise<void> {
    if (e.running) return e.running;
    const t = new Date().toISOString();
    try {
      if (claim && e.armedFrom) {
        const won = this.sqlite.prepare('UPDATE cron_state SET last_run_at = ? WHERE name = ? AND last_run_at = ?').run(t, e.name, e.armedFrom).changes;
        // Another instance ran this slot (or "run now" moved it): re-arm from the value it wrote.
        if (won === 0) return;
      } else {
        this.sqlite.prepare('INSERT INTO cron_state (name, last_run_at) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET last_run_at = excluded.last_run_at').run(e.name, t);
      }
    } catch (err) {
      // A database held by another program: run anyway; at worst the job runs once more after a restart.
      if (!isBusy(err)) throw err;
    }
    e.running = (async () => {
      try {
        await e.fn();
      } catch (err) {
        this.log(`schedule ${e.name} failed`, err);
      }
    })().finally(() => {
      e.running = undefined;
    });
    return e.running;
  }
}
