/**
 * A PostgreSQL catalogue's snapshot (self-update's pre-upgrade copy, backups): `pg_dump` in its custom
 * format, and its way back with `pg_restore`. The connection goes by libpq's environment variables, so the password
 * never shows in a process list.
 */
import { execFile } from 'node:child_process';
import { connectPostgres, relationCount } from './connect';

/** libpq's environment for a `postgres://user:pass@host:port/db?sslmode=…` URL. */
export function libpqEnv(url: string): Record<string, string> {
  const u = new URL(url);
  const env: Record<string, string> = {};
  if (u.hostname) env.PGHOST = decodeURIComponent(u.hostname.replace(/^\[|\]$/g, ''));
  if (u.port) env.PGPORT = u.port;
  if (u.username) env.PGUSER = decodeURIComponent(u.username);
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  const db = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (db) env.PGDATABASE = db;
  const ssl = u.searchParams.get('sslmode');
  if (ssl) env.PGSSLMODE = ssl;
  return env;
}

/** Dumps the database at `url` to `file`; rejects with pg_dump's own words (or how to get it). */
export function pgDump(url: string, file: string, bin = 'pg_dump'): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      ['--format=custom', '--no-owner', '--file', file],
      { env: { ...process.env, ...libpqEnv(url) }, timeout: 30 * 60_000, maxBuffer: 1 << 20 },
      (err, _out, stderr) => {
        if (!err) return resolve();
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new Error(
            missing ? `${bin} was not found: install the PostgreSQL client tools (or set SERVICE_UPDATE_PRE_COMMAND)` : String(stderr).trim() || err.message,
          ),
        );
      },
    );
  });
}

/** Relations in the current schema of the database at `url` (0: empty, a restore may fill it). */
export async function pgRelationCount(url: string): Promise<number> {
  const c = await connectPostgres(url);
  try {
    return await relationCount(c);
  } finally {
    await c.end();
  }
}

/**
 * Restores the custom-format dump `file` into the (empty) database at `url` in one transaction: on a
 * failure nothing of it stays. Rejects with pg_restore's own words (or how to get it).
 */
export function pgRestore(url: string, file: string, bin = 'pg_restore'): Promise<void> {
  return new Promise((resolve, reject) => {
    const args = ['--no-owner', '--exit-on-error', '--single-transaction', '--dbname', libpqEnv(url).PGDATABASE ?? 'postgres', file];
    execFile(bin, args, { env: { ...process.env, ...libpqEnv(url) }, timeout: 6 * 3_600_000, maxBuffer: 1 << 20 }, (err, _out, stderr) => {
      if (!err) return resolve();
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      reject(new Error(missing ? `${bin} was not found: install the PostgreSQL client tools` : String(stderr).trim() || err.message));
    });
  });
}
