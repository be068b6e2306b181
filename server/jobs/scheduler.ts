/**
 * Recurring work: fixed intervals (`every`) and cron expressions (`cron`).
 * The last run of each schedule is kept in `cron_state`, so a schedule that
 * was due while the service was down runs shortly after boot, once.
 */
import { isBusy, type Sqlite } from '../db';
import { nextRun, parseCron, type CronSpec } from './cron';

interface Entry {
  name: string;
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

  private lastRun(name: string): Date | null {
    const row = this.sqlite.prepare('SELECT last_run_at FROM cron_state WHERE name = ?').get(name) as { last_run_at: string } | undefined;
    return row ? new Date(row.last_run_at) : null;
  }

  private arm(e: Entry): void {
    if (this.stopped) return;
    const at = e.due(this.lastRun(e.name));
    // Timers cap at ~24.8 days; re-arm in steps.
    const wait = Math.min(Math.max(0, at.getTime() - Date.now()), 2 ** 31 - 1);
    e.timer = setTimeout(() => (Date.now() >= at.getTime() ? this.fire(e).then(() => this.arm(e)) : this.arm(e)), wait);
    e.timer.unref();
  }

  private async fire(e: Entry): Promise<void> {
    if (e.running) return e.running;
    try {
      this.sqlite.prepare('INSERT INTO cron_state (name, last_run_at) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET last_run_at = excluded.last_run_at').run(e.name, new Date().toISOString());
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
