/**
 * Database waits off the event loop. better-sqlite3 is synchronous: while
 * another process holds the write lock, SQLite's busy handler sleeps on the
 * main thread, and with a long `busy_timeout` the whole server froze for the
 * hold. So the main connection waits at most BUSY_TIMEOUT_MS inside SQLite,
 * and dropping to 0 while a hold is known (a BUSY was seen in the last
 * QUIET_MS), so a held lock costs the event loop nothing. Writes that matter
 * to a request go through `write()`, which retries asynchronously with
 * backoff up to the configured wait and then fails with `database_busy`
 * (503, Retry-After). Reads never wait: WAL lets them run beside any writer.
 * See docs/architecture.md, "Database waits".
 */
import { AppError } from '../errors';
import type Database from 'better-sqlite3';

type Sqlite = Database.Database;

/** The most a statement may block the main thread inside SQLite's own busy handler. */
export const BUSY_TIMEOUT_MS = 5;
/** After this long without a BUSY, statements get their BUSY_TIMEOUT_MS again. */
const QUIET_MS = 250;
const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 100;

/**
 * True for SQLite's "another connection holds the lock" errors (SQLITE_BUSY*, SQLITE_LOCKED*) and for
 * `database_busy`, which the PostgreSQL pool throws while the database is away (pg/pool.ts): both
 * mean "not now, try again", and everything that rides out a held SQLite rides out an outage the same way.
 */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === 'database_busy');
}

/** Counters for the admin status route. */
export interface BusyStats {
  /** BUSY answers seen (each failed attempt counts). */
  busy: number;
  /** `write()` calls that succeeded after waiting. */
  recovered: number;
  /** `write()` calls that gave up with `database_busy`. */
  gave_up: number;
  /** Whether a hold is known right now (statements do not wait inside SQLite). */
  held: boolean;
  /** The longest a `write()` waited before it succeeded or gave up, in ms. */
  max_wait_ms: number;
}

export interface WriteOptions {
  /** How long to keep retrying, in ms (default: the connection's configured wait). */
  waitMs?: number;
  /** BEGIN IMMEDIATE around `fn` (default true): the lock is taken up front, so no half-done transaction meets BUSY. */
  transaction?: boolean;
}

export class DbWaits {
  private stats: BusyStats = { busy: 0, recovered: 0, gave_up: 0, held: false, max_wait_ms: 0 };
  private quietTimer: NodeJS.Timeout | null = null;

  /**
   * `waitMs`: how long `write()` retries by default before `database_busy`;
   * `busyTimeoutMs`: the most one statement waits inside SQLite (a command-line
   * tool, which has no event loop to keep free, may pass seconds). `sqlite` null: PostgreSQL, whose pool
   * retries on its own (pg/pool.ts); only the counters are kept, for the health route.
   */
  constructor(
    private sqlite: Sqlite | null,
    readonly waitMs: number,
    private busyTimeoutMs = BUSY_TIMEOUT_MS,
  ) {
    sqlite?.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }

  /**
   * Runs the synchronous `fn` (in an IMMEDIATE transaction by default) and
   * returns its result. While the database is held by another process it
   * retries with backoff, never blocking the event loop, up to `waitMs`; then
   * throws `database_busy` with `retry_after` (seconds). Other errors pass
   * through at once. `fn` may run several times: it must not have side effects
   * outside the database before it returns.
   */
  async write<T>(fn: () => T, o: WriteOptions = {}): Promise<T> {
    const t0 = Date.now();
    if (!this.sqlite) throw new Error('a synchronous transaction needs SQLite: on PostgreSQL statements run on db.async');
    const tx = o.transaction === false ? fn : this.sqlite.transaction(fn).immediate;
    let waited = false;
    let out: T;
    try {
      out = await untilFree(tx, o.waitMs ?? this.waitMs, () => {
        waited = true;
        this.sawBusy();
      });
    } catch (e) {
      if (!isBusy(e)) throw e;
      this.stats.gave_up++;
      this.noteWait(Date.now() - t0);
      throw busyError();
    }
    if (waited) {
      this.stats.recovered++;
      this.noteWait(Date.now() - t0);
    }
    return out;
  }

  /**
   * Records a BUSY seen anywhere (an unwrapped statement, a background job):
   * statements stop waiting inside SQLite until QUIET_MS pass without one.
   */
  sawBusy(): void {
    this.stats.busy++;
    if (!this.stats.held) {
      this.stats.held = true;
      this.sqlite?.pragma('busy_timeout = 0');
    }
    if (this.quietTimer) this.quietTimer.refresh();
    else {
      this.quietTimer = setTimeout(() => {
        this.quietTimer = null;
        this.stats.held = false;
        if (this.sqlite?.open) this.sqlite.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      }, QUIET_MS);
      this.quietTimer.unref();
    }
  }

  /** A copy of the counters. */
  snapshot(): BusyStats {
    return { ...this.stats };
  }

  /** Stops the quiet timer (the connection is closing). */
  stop(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = null;
  }

  private noteWait(ms: number): void {
    this.stats.max_wait_ms = Math.max(this.stats.max_wait_ms, ms);
  }
}

/**
 * Runs `attempt` until it does not fail with BUSY, backing off (5 ms doubling
 * to 100 ms) on timers, never blocking the event loop; after `waitMs` the last
 * BUSY error is thrown (Infinity: until the database is free, for background
 * work that must not lose what it records). Other errors pass through at once.
 */
export async function untilFree<T>(attempt: () => T | Promise<T>, waitMs: number, onBusy?: () => void): Promise<T> {
  const deadline = Date.now() + waitMs;
  let backoff = FIRST_BACKOFF_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (e) {
      if (!isBusy(e)) throw e;
      onBusy?.();
      const left = deadline - Date.now();
      if (left <= 0) throw e;
      await new Promise((r) => setTimeout(r, Math.min(backoff, left)));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

/** The error a request gets when the database stayed held past the wait (503 with Retry-After). */
export const busyError = (): AppError => new AppError('database_busy', { retry_after: 2 });

/**
 * A unit whose COMMIT was sent but never answered (PostgreSQL hung or cut at that moment): it is
 * `database_busy` like any other, but it may still commit when the server reads it. A writer that takes
 * its bytes back on `database_busy` settles the row once the unit's fate is known (WriteGate.written).
 */
export interface InDoubt {
  inDoubt: true;
  /** Whether the unit's fate is decided now: its connection's server process has ended. */
  decided(): Promise<boolean>;
}

export const commitInDoubt = (e: unknown): InDoubt | null => (isBusy(e) && (e as Partial<InDoubt>).inDoubt === true ? (e as InDoubt) : null);
