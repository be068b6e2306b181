/**
 * Schedules kept in admin settings (replication's report, audits and drill;
 * scheduled backups) change at any time: each change re-arms them here.
 */
import type { Scheduler } from './scheduler';

/**
 * (Re)arms the schedule `name` with `cron`; an empty expression removes it. An
 * invalid one (the API refuses those, but a value may come from an older
 * install) is logged and removed, so nothing runs on a guess.
 */
export function armCron(scheduler: Scheduler, name: string, cron: string, run: () => unknown, log: (msg: string, err?: unknown) => void): void {
  if (!cron.trim()) return scheduler.remove(name);
  try {
    scheduler.cron(name, cron, async () => void (await run()));
  } catch (e) {
    log(`the schedule ${name} is invalid; it does not run on its own`, e);
    scheduler.remove(name);
  }
}
