/**
 * Async reads over a pg.Pool of their own, for the hot read paths
 * (docs/postgresql.md, plan step 2): while PostgreSQL works on a listing page
 * the event loop serves other requests, where the bridge blocks it for the
 * whole round trip. Single read statements only: nothing here needs the
 * bridge's one-connection transactions. Values as the bridge gives them; a
 * lost or unreachable database is `database_busy` (503) like on the bridge.
 */
import pg from 'pg';
import { busyError } from '../busy';
import { PgStatementError, namedToPositional, toPositional } from './bridge';
import { sqliteLikeTypes } from './types';

export interface AsyncReader {
  /** Rows of one read statement; `@name` parameters from `params`; `raw`: rows as arrays. */
  all<R>(sql: string, params: Record<string, unknown>, o?: { raw?: boolean }): Promise<R[]>;
  close(): Promise<void>;
}

/** Errors that mean the connection is gone or never came, not that the statement was wrong. */
const lost = (e: unknown): boolean => {
  const code = (e as { code?: unknown }).code;
  return typeof code !== 'string' || code.startsWith('08') || code.startsWith('57P') || /^E[A-Z]/.test(code);
};

/** How much longer than the statement timeout a read waits for a server that sends nothing at all (as the bridge). */
const QUERY_SLACK_MS = 1000;

export function openReader(url: string, o: { max?: number; statementTimeoutMs?: number } = {}): AsyncReader {
  const statementTimeoutMs = o.statementTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: url,
    max: o.max ?? 4,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 2000,
    statement_timeout: statementTimeoutMs,
    // statement_timeout is the server's: a server that hangs never sends it, so the client gives up too.
    query_timeout: statementTimeoutMs + QUERY_SLACK_MS,
    // No parallel plans: the reader serves many small requests at once, and a search's workers took the
    // cores from the others (a 1,000-hit search: 137 ms with 2 workers, 31 ms without, at load 12). No JIT:
    // a 1,000-hit search estimated near jit_above_cost runs in ~15 ms, less than compiling it would take.
    options: '-c max_parallel_workers_per_gather=0 -c jit=off',
    types: sqliteLikeTypes,
  });
  // An idle connection that drops is replaced on the next checkout; the event must not go uncaught.
  pool.on('error', () => {});
  const shapes = new Map<string, { text: string; names: string[] }>();
  const shape = (sql: string) => {
    let s = shapes.get(sql);
    if (!s) {
      const named = namedToPositional(sql);
      s = { text: toPositional(named?.sql ?? sql), names: named?.names ?? [] };
      if (shapes.size >= 200) shapes.clear();
      shapes.set(sql, s);
    }
    return s;
  };
  return {
    async all<R>(sql: string, params: Record<string, unknown>, q: { raw?: boolean } = {}) {
      const s = shape(sql);
      const values = s.names.map((n) => params[n]);
      try {
        // On any error pool.query discards the connection (a timed-out one may still carry the statement).
        const r = await pool.query({ text: s.text, values, ...(q.raw ? { rowMode: 'array' as const } : {}) });
        return r.rows as R[];
      } catch (e) {
        if (lost(e)) throw busyError();
        const err = e as { message?: string; code?: string; constraint?: string };
        throw new PgStatementError(err.message ?? String(e), err.code, err.constraint);
      }
    },
    close: () => pool.end(),
  };
}
