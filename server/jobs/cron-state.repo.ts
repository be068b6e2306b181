/**
 * `cron_state`: each schedule's last run (the jobs module owns the table;
 * `scheduler.ts` holds the rules). Every write is one conditional statement,
 * so instances sharing the database never need a lock between a read and a
 * write: seeding is `ON CONFLICT DO NOTHING`, a scheduled fire a
 * check-and-set on the value it armed from.
 */
import type { Db } from '../db';

export class CronStateRepo {
  constructor(private db: Db) {}

  private read(name: string) {
    return this.db.k.selectFrom('cron_state').select('last_run_at').where('name', '=', name);
  }

  /**
   * The schedule's recorded last run; a schedule seen for the first time is seeded with `now`. Two callers
   * seeding at once both get the one value that was stored first.
   */
  async lastRun(name: string, now: string): Promise<string> {
    const known = await this.db.async.first(this.read(name));
    if (known) return known.last_run_at;
    const seed = this.db.k
      .insertInto('cron_state')
      .values({ name, last_run_at: now })
      .onConflict((oc) => oc.column('name').doNothing());
    const read = this.read(name);
    return this.db.async.unit(function* (t) {
      yield* t.run(seed);
      return (yield* t.first(read))!.last_run_at;
    });
  }

  /** Moves the last run from `from` to `at` unless another caller moved it first: whether this caller did. */
  async claim(name: string, from: string, at: string): Promise<boolean> {
    return (await this.db.async.run(this.db.k.updateTable('cron_state').set({ last_run_at: at }).where('name', '=', name).where('last_run_at', '=', from))) > 0;
  }

  /** Records a run at `at` whatever was recorded before (a "run now"). */
  async record(name: string, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('cron_state')
        .values({ name, last_run_at: at })
        .onConflict((oc) => oc.column('name').doUpdateSet({ last_run_at: at })),
    );
  }
}
