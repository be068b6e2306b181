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
import { isBusy, type Db } from '../db';
import { CronStateRepo } from './cron-state.repo';
import { nextRun, parseCron, type CronSpec } from './cron';

interface Entry {
  name: string;
  /** The `last_run_at` this entry was armed from (null: the row could not be read or seeded). */
  armedFrom?: string | null;
  due: (last: Date | null) => Date;
  fn: () => Promise<void> | void;
  timer?: NodeJS.Timeout;
  /** Reading the last run before the timer is set (stop waits for it). */
  arming?: Promise<void>;
  running?: Promise<void>;
}

export class Scheduler {
  private entries = new Map<string, Entry>();
  private stopped = false;
  private repo: CronStateRepo;

  constructor(
    db: Db,
    private log: (msg: string, err?: unknown) => void = () => {},
  ) {
    this.repo = new CronStateRepo(db);
  }

  /** Runs `fn` every `ms` (0 or less disables it); the first run is `ms` after the last recorded one. */
  every(name: string, ms: number, fn: () => Promise<void> | void): void {
    if (ms <= 0) return this.remove(name);
    this.add({ name, fn, due: (last) => new Date(Math.max(Date.now() + 1000, (last?.getTime() ?? Date.now()) + ms)) });
  }

  /** Runs `fn` on a cron expression (see cron.ts), read in `timezone` when given; throws on a bad expression or zone. */
  cron(name: string, expr: string, fn: () => Promise<void> | void, timezone?: string): void {
    const spec: CronSpec = parseCron(expr, timezone);
    this.add({
      name,
      fn,
      due: (last) => {
        const next = nextRun(spec, last ?? new Date());
        return next.getTime() < Date.now() ? new Date(Date.now() + 1000) : next;
      },
    });
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
    await Promise.allSettled([...this.entries.values()].flatMap((e) => [e.arming, e.running]));
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
  private async lastRun(name: string): Promise<string | null> {
    try {
      return await this.repo.lastRun(name, new Date().toISOString());
    } catch (err) {
      // A database held by another program: arm from now; the fire claims with an upsert.
      if (!isBusy(err)) this.log(`schedule ${name} could not read its last run`, err);
      return null;
    }
  }

  private arm(e: Entry): void {
    if (this.stopped) return;
    e.arming = this.lastRun(e.name).then((from) => {
      e.arming = undefined;
      // Removed, replaced or stopped while its last run was read.
      if (this.stopped || this.entries.get(e.name) !== e) return;
      e.armedFrom = from;
      const at = e.due(from === null ? null : new Date(from));
      // Timers cap at ~24.8 days; re-arm in steps.
      const wait = Math.min(Math.max(0, at.getTime() - Date.now()), 2 ** 31 - 1);
      e.timer = setTimeout(() => (Date.now() >= at.getTime() ? this.fire(e, true).then(() => this.arm(e)) : this.arm(e)), wait);
      e.timer.unref();
    });
  }

  /** Records the run and runs it; a scheduled fire (`claim`) runs only when its check-and-set wins. */
  private fire(e: Entry, claim = false): Promise<void> {
    if (e.running) return e.running;
    e.running = this.claimAndRun(e, claim).finally(() => {
      e.running = undefined;
    });
    return e.running;
  }

  private async claimAndRun(e: Entry, claim: boolean): Promise<void> {
    const t = new Date().toISOString();
    try {
      if (claim && e.armedFrom) {
        // Another instance ran this slot (or "run now" moved it): re-arm from the value it wrote.
        if (!(await this.repo.claim(e.name, e.armedFrom, t))) return;
      } else {
        await this.repo.record(e.name, t);
      }
    } catch (err) {
      // A database held by another program: run anyway; at worst the job runs once more after a restart.
      if (!isBusy(err)) throw err;
    }
    try {
      await e.fn();
    } catch (err) {
      this.log(`schedule ${e.name} failed`, err);
    }
  }
}
