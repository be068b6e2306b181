/**
 * One PostgreSQL connection with bounded waits and errors a person can act
 * on: which host did not answer, which database does not exist, whose
 * password was refused, never the password itself.
 */
import pg from 'pg';

import { DatabaseUrlError, redactUrl } from './url-error';

export { DatabaseUrlError, redactUrl };

const CONNECT_TIMEOUT_MS = 10_000;

/** int8 as bigint: exact, and distinguishable from text when rows are compared. */
const exactTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (v: string) => BigInt(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Connects, or throws DatabaseUrlError saying what is wrong. */
export async function connectPostgres(url: string, o: { timeoutMs?: number; applicationName?: string } = {}): Promise<pg.Client> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlError('the database URL is not a URL: expected postgres://user:password@host:5432/database');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new DatabaseUrlError(`the database URL must start with postgres:// (got ${parsed.protocol}//)`);
  }
  const c = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: o.timeoutMs ?? CONNECT_TIMEOUT_MS,
    types: exactTypes,
    application_name: o.applicationName,
  });
  // A connection lost later surfaces as the failing query's error; this keeps it from being an uncaught 'error' event.
  c.on('error', () => {});
  try {
    await c.connect();
  } catch (e) {
    await c.end().catch(() => {});
    throw new DatabaseUrlError(`cannot use the database ${redactUrl(url)}: ${explain(e)}`);
  }
  return c;
}

/** Tables, views and sequences in the connection's current schema: 0 for a database nothing was put in yet. */
export async function relationCount(c: pg.Client): Promise<number> {
  const r = await c.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM pg_class WHERE relnamespace = to_regnamespace(current_schema()) AND relkind IN ('r', 'p', 'v', 'm', 'S', 'f')`,
  );
  return Number(r.rows[0].n);
}

/** What went wrong with a connection attempt, in words a person can act on. */
export function explain(e: unknown): string {
  const err = e as { code?: string; message?: string };
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused (is PostgreSQL running and listening on that host and port?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'unknown host';
    case 'ETIMEDOUT':
      return 'no answer (timed out)';
    case '28P01':
    case '28000':
      return `sign-in refused: ${err.message}`;
    case '3D000':
      return `${err.message} (create it first: createdb, or CREATE DATABASE)`;
    default:
      return /timeout/i.test(err.message ?? '') ? 'no answer (timed out)' : (err.message ?? String(e));
  }
}
