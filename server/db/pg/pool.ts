/**
 * `db.async` on PostgreSQL: a `pg.Pool` (docs/postgresql.md, "The pool").
 * Single statements take any free client; a unit of work takes one client
 * for BEGIN … COMMIT and is run again from the start on a serialization
 * failure or a deadlock. While PostgreSQL works the event loop serves other
 * requests. Requests past the
 * pool queue's bound, a checkout that waits past its timeout, and a lost or
 * unreachable server are `database_busy` (503 with Retry-After), never a wait
 * on the event loop; a unit whose connection is cut is rolled back by the
 * server and answers the same.
 */
import { availableParallelism } from 'node:os';
import pg from 'pg';
import { busyError, isBusy } from '../busy';
import { PgStatementError, namedToPositional, toPositional } from './params';
import { sqliteLikeTypes } from './types';
import { driveAsync, tx, type AsyncDb, type Step, type UnitOptions } from '../async';

/** Errors that mean the connection is gone or never came, not that the statement was wrong. */
const lost = (e: unknown): boolean => {
  const code = (e as { code?: unknown }).code;
  return typeof code !== 'string' || code.startsWith('08') || code.startsWith('57P') || /^E[A-Z]/.test(code);
};
/** serialization_failure, deadlock_detected: the unit is run again, with a growing random pause, for up to its wait. */
const RETRY = new Set(['40001', '40P01']);
const DEFAULT_RETRY_MS = 2000;
const UNIQUE_VIOLATION = '23505';

/** A server process that still runs may yet commit what it read before its client went. */
const BACKEND_ALIVE = 'SELECT 1 FROM pg_stat_activity WHERE pid = $1';

/** How much longer than the statement timeout a statement waits for a server that sends nothing at all. */
const QUERY_SLACK_MS = 1000;

/** The default pool size: two connections per core, at least 4, at most 16 (a desktop shares its database server). */
export const defaultPoolSize = (): number => Math.min(16, Math.max(4, availableParallelism() * 2));

export interface PoolOptions {
  max?: number;
  /** Statements waiting for a client past this many answer 503 at once (default 16 per client, at least 64). */
  maxWaiting?: number;
  statementTimeoutMs?: number;
  /** How long a statement waits for a free client before 503 (default 2 s). */
  checkoutMs?: number;
  /** Shown in pg_stat_activity: which process holds a connection. */
  applicationName?: string;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

export function openPool(url: string, o: PoolOptions = {}): AsyncDb {
  const max = o.max ?? defaultPoolSize();
  const maxWaiting = o.maxWaiting ?? Math.max(64, max * 16);
  const statementTimeoutMs = o.statementTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: url,
    application_name: o.applicationName,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: o.checkoutMs ?? 2000,
    statement_timeout: statementTimeoutMs,
    // statement_timeout is the server's: a server that hangs never sends it, so the client gives up too.
    query_timeout: statementTimeoutMs + QUERY_SLACK_MS,
    // No parallel plans: the pool serves many small requests at once, and a search's workers took the
    // cores from the others (a 1,000-hit search: 137 ms with 2 workers, 31 ms without, at load 12). No JIT:
    // a 1,000-hit search estimated near jit_above_cost runs in ~15 ms, less than compiling it would take.
    options: '-c max_parallel_workers_per_gather=0 -c jit=off',
    types: sqliteLikeTypes,
  });
  // A client that drops (idle, or checked out by a unit whose statement then fails) is replaced on the next
  // checkout; its error event must not go uncaught.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));

  const shapes = new Map<string, { text: string; names: string[] }>();
  const shape = (sql: string) => {
    let s = shapes.get(sql);
    if (!s) {
      const named = namedToPositional(sql);
      s = { text: toPositional(named?.sql ?? sql), names: named?.names ?? [] };
      if (shapes.size >= 500) shapes.clear();
      shapes.set(sql, s);
    }
    return s;
  };
  const refuseWhenFull = () => {
    if (pool.waitingCount >= maxWaiting) throw busyError();
  };
  const mapError = (e: unknown): unknown => {
    if ((e as { code?: unknown }).code === 'database_busy') return e;
    if (lost(e)) return busyError();
    const err = e as { message?: string; code?: string; constraint?: string };
    return new PgStatementError(err.message ?? String(e), err.code, err.constraint);
  };

  /** Runs one step on `c` and shapes its answer as better-sqlite3 would. */
  const exec = async (c: Queryable, s: Step): Promise<unknown> => {
    if (s.op === 'sql') {
      const sh = shape(s.text);
      const values = Array.isArray(s.params) ? s.params : sh.names.map((n) => (s.params as Record<string, unknown>)[n]);
      const r = await c.query({ text: sh.text, values, ...(s.raw ? { rowMode: 'array' as const } : {}) });
      return r.rows;
    }
    const compiled = s.q.compile();
    const r = await c.query(compiled.sql, compiled.parameters as unknown[]);
    return s.op === 'all' ? r.rows : s.op === 'first' ? r.rows[0] : (r.rowCount ?? 0);
  };
  const single = async <T>(s: Step): Promise<T> => {
    refuseWhenFull();
    try {
      // On any error pool.query discards the client (a timed-out one may still carry the statement).
      return (await exec(pool, s)) as T;
    } catch (e) {
      throw mapError(e);
    }
  };

  async function unit<T>(body: (t: typeof tx) => Generator<Step, T, unknown>, uo: UnitOptions = {}): Promise<T> {
    const deadline = Date.now() + (uo.waitMs ?? DEFAULT_RETRY_MS);
    for (let attempt = 1; ; attempt++) {
      refuseWhenFull();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        throw mapError(e);
      }
      // Statement errors become PgStatementError or database_busy here; what the body throws passes as it is.
      const run = (s: Step | string) =>
        (typeof s === 'string' ? client.query(s) : exec(client, s)).catch((e: unknown) => {
          throw mapError(e);
        });
      let committing = false;
      try {
        await run(uo.isolation === 'serializable' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN');
        const out = await driveAsync(body(tx), run);
        committing = true;
        await run('COMMIT');
        return out;
      } catch (e) {
        if (isBusy(e)) {
          // Lost or silent: a ROLLBACK would wait for the same server again. Closing the connection rolls
          // back what it had not committed; a COMMIT already sent may still land when a hung server wakes.
          const pid = (client as unknown as { processID: number }).processID;
          client.release(true);
          client = null as never;
          if (!committing) throw e;
          const decided = async () => (await single<unknown[]>({ op: 'sql', text: BACKEND_ALIVE, params: [pid], raw: false })).length === 0;
          throw Object.assign(e as object, { inDoubt: true, decided });
        }
        const gone = await client.query('ROLLBACK').then(
          () => false,
          () => true,
        ); // gone: the server rolled it back
        client.release(gone);
        client = null as never;
        const code = (e as { code?: unknown }).code;
        if (e instanceof PgStatementError && typeof code === 'string' && (RETRY.has(code) || (uo.retryUnique && code === UNIQUE_VIOLATION))) {
          if (Date.now() >= deadline) throw busyError(); // contended past the wait: as busy as a held SQLite
          await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
          continue;
        }
        throw e;
      } finally {
        client?.release();
      }
    }
  }

  const all: AsyncDb['all'] = (q) => single({ op: 'all', q });
  const sql: AsyncDb['sql'] = (text, params = [], so = {}) => single({ op: 'sql', text, params, raw: !!so.raw });
  return {
    all,
    first: (q) => single({ op: 'first', q }),
    run: (q) => single({ op: 'run', q }),
    sql,
    unit,
    read: (body) => driveAsync(body(tx), single),
    // The pool already keeps the event loop free.
    aside: { all, sql },
    stats: () => ({ size: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => pool.end(),
  };
}
