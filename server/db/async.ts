/**
 * The asynchronous data layer (docs/architecture.md, "One asynchronous data
 * layer"). Repositories call `db.async`: single statements return promises,
 * and a unit of work is a generator of statements,
 *
 *   db.async.unit(function* (t) {
 *     const row = yield* t.first(k.selectFrom('shares')...);
 *     if (!row) throw new AppError('not_found');
 *     return yield* t.run(k.update…(…).where(…));
 *   });
 *
 * so one body runs on both databases the way each needs: on SQLite the
 * generator is driven synchronously inside one IMMEDIATE transaction (nothing
 * else can run between its statements, as with better-sqlite3 today, and it
 * costs no promise per statement); on PostgreSQL it is driven statement by
 * statement on one pooled client between BEGIN and COMMIT while the event
 * loop serves everything else, and run again from the start on a
 * serialization failure or deadlock. A unit's body holds no other I/O: it
 * cannot `await`, which is the rule "never hold a transaction across I/O to a
 * storage" made structural.
 */
import type { Compilable } from 'kysely';

/** One statement a unit of work yields: a Kysely query, or SQL text with `?` or `@name` parameters. */
export type Step =
  | { op: 'all' | 'first' | 'run'; q: Compilable<unknown> }
  | { op: 'sql'; text: string; params: unknown[] | Record<string, unknown>; raw: boolean };

/** A unit of work's body: yields statements, gets their results back, returns the unit's value. */
export type Unit<T> = Generator<Step, T, unknown>;

/** The statements a unit of work may yield (each used as `yield* t.first(q)`). */
export interface Tx {
  all<R>(q: Compilable<R>): Generator<Step, R[], unknown>;
  first<R>(q: Compilable<R>): Generator<Step, R | undefined, unknown>;
  /** A write; the changed row count. */
  run(q: Compilable<unknown>): Generator<Step, number, unknown>;
  /** SQL text (the hot statements of test/architecture/hot-queries.sql); `raw`: rows as arrays. */
  sql<R>(text: string, params?: unknown[] | Record<string, unknown>, o?: { raw?: boolean }): Generator<Step, R[], unknown>;
}

export const tx: Tx = {
  *all<R>(q: Compilable<R>) {
    return (yield { op: 'all', q }) as R[];
  },
  *first<R>(q: Compilable<R>) {
    return (yield { op: 'first', q }) as R | undefined;
  },
  *run(q: Compilable<unknown>) {
    return (yield { op: 'run', q }) as number;
  },
  *sql<R>(text: string, params: unknown[] | Record<string, unknown> = [], o: { raw?: boolean } = {}) {
    return (yield { op: 'sql', text, params, raw: !!o.raw }) as R[];
  },
};

export interface UnitOptions {
  /**
   * PostgreSQL's isolation for this unit (default `read committed`, where a conditional update re-checks its
   * WHERE on the locked row). `serializable` where a unit reads, decides and writes across rows that a
   * concurrent unit may change; SQLite's single writer is already serializable.
   */
  isolation?: 'read committed' | 'serializable';
  /** How long to keep retrying a database that is busy or away before `database_busy` (default: the connection's). */
  waitMs?: number;
  /**
   * PostgreSQL: run again on a unique violation too, as on a serialization failure. For a unit that makes or
   * re-keys rows a concurrent writer may have just made (the sync cataloguing the file a write put on disk):
   * run again, it sees them. Serializable isolation does not turn every such collision into 40001.
   */
  retryUnique?: boolean;
}

/** The asynchronous face of the database both dialects share. */
export interface AsyncDb {
  all<R>(q: Compilable<R>): Promise<R[]>;
  first<R>(q: Compilable<R>): Promise<R | undefined>;
  run(q: Compilable<unknown>): Promise<number>;
  sql<R>(text: string, params?: unknown[] | Record<string, unknown>, o?: { raw?: boolean }): Promise<R[]>;
  /** Runs `body` as one transaction: every statement commits, or none does. */
  unit<T>(body: (t: Tx) => Unit<T>, o?: UnitOptions): Promise<T>;
  /**
   * Runs a body of reads outside a transaction, each statement on its own (PostgreSQL: any pooled
   * connection; SQLite: no write lock, unlike `unit`). For reads that need no snapshot across statements.
   */
  read<T>(body: (t: Tx) => Unit<T>): Promise<T>;
  /**
   * Reads heavy enough to hold the event loop (a content search), run where they do not: on SQLite on a
   * reader thread's own read-only connection (read-pool.ts; it sees every write committed before the call),
   * on PostgreSQL the pool, as `all` and `sql`. Statements that return rows only.
   */
  aside: {
    all<R>(q: Compilable<R>): Promise<R[]>;
    sql<R>(text: string, params?: unknown[] | Record<string, unknown>, o?: { raw?: boolean }): Promise<R[]>;
  };
  /** Pool figures for the status route (PostgreSQL); SQLite has no pool. */
  stats(): { size: number; idle: number; waiting: number } | null;
  close(): Promise<void>;
}

/**
 * Drives `body` to its end with `exec` answering each statement synchronously. A statement that fails
 * ends the unit (it rolls back) on both databases alike: PostgreSQL cannot go on in a transaction after
 * an error, so a body never catches one; "insert unless there" is `ON CONFLICT DO NOTHING` and a count.
 */
export function driveSync<T>(body: Unit<T>, exec: (s: Step) => unknown): T {
  let r = body.next();
  while (!r.done) r = body.next(exec(r.value));
  return r.value;
}

/** The same with `exec` answering asynchronously (PostgreSQL). */
export async function driveAsync<T>(body: Unit<T>, exec: (s: Step) => Promise<unknown>): Promise<T> {
  let r = body.next();
  while (!r.done) r = body.next(await exec(r.value));
  return r.value;
}
