/**
 * The login_failures table (owned by auth): the login throttle's counters when several instances share one
 * database. Every method is one statement on `db.async`; a failure is counted by one conditional upsert, so
 * instances and requests bumping one key at once all count.
 */
import type { Db } from '../db';

export interface FailureCounter {
  failures: number;
  lockedUntil: number;
  firstAt: number;
}

type Row = { failures: number | string; first_at: number | string; locked_until: number | string };
const counter = (r: Row): FailureCounter => ({ failures: Number(r.failures), firstAt: Number(r.first_at), lockedUntil: Number(r.locked_until) });

export class LoginFailuresRepo {
  constructor(private db: Db) {}

  /** The counter of `key`, or undefined when it has none. */
  async get(key: string): Promise<FailureCounter | undefined> {
    const r = await this.db.async.first(this.db.k.selectFrom('login_failures').select(['failures', 'first_at', 'locked_until']).where('key', '=', key));
    return r && counter(r);
  }

  /**
   * Counts one failure of `key` in one conditional upsert, so two instances bumping at once both count:
   * a new window when the last lock has ended or the window passed; locked until `now + lockMs` at `limit`.
   */
  async bump(key: string, limit: number, windowMs: number, lockMs: number, now = Date.now()): Promise<FailureCounter> {
    // Every SET reads the old row.
    const reset =
      '((login_failures.locked_until > 0 AND login_failures.locked_until <= CAST(@now AS BIGINT)) OR login_failures.first_at < CAST(@windowStart AS BIGINT))';
    const [r] = await this.db.async.sql<Row>(
      `INSERT INTO login_failures (key, failures, first_at, locked_until)
       VALUES (@key, 1, CAST(@now AS BIGINT), CASE WHEN 1 >= CAST(@limit AS BIGINT) THEN CAST(@lockUntil AS BIGINT) ELSE 0 END)
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN ${reset} THEN 1 ELSE login_failures.failures + 1 END,
         first_at = CASE WHEN ${reset} THEN CAST(@now AS BIGINT) ELSE login_failures.first_at END,
         locked_until = CASE WHEN (CASE WHEN ${reset} THEN 1 ELSE login_failures.failures + 1 END) >= CAST(@limit AS BIGINT) THEN CAST(@lockUntil AS BIGINT)
                             WHEN ${reset} THEN 0 ELSE login_failures.locked_until END
       RETURNING failures, first_at, locked_until`,
      { key, now, windowStart: now - windowMs, limit, lockUntil: now + lockMs },
    );
    return counter(r);
  }

  /** Drops the counters whose lock and window have both passed. */
  async prune(now: number, windowMs: number): Promise<void> {
    await this.db.async.run(
      this.db.k
        .deleteFrom('login_failures')
        .where('locked_until', '<', now)
        .where('first_at', '<', now - windowMs),
    );
  }

  /** Forgets `key`'s failures; idempotent. */
  async forget(key: string): Promise<void> {
    await this.db.async.run(this.db.k.deleteFrom('login_failures').where('key', '=', key));
  }
}
