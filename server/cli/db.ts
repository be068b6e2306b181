/** `service db migrate-to <postgres-url>`: copies the SQLite catalogue into an empty PostgreSQL database (docs/postgresql.md). */
import { existsSync } from 'node:fs';
import type { Config } from '../config';
import { DatabaseUrlError, redactUrl } from '../db';
import { copySqliteToPostgres, CopyRefused } from '../db/pg/copy';
import { acquireLock, layout } from '../lib/data-dir';
import { parse, UsageError } from './args';

const USAGE = `
Usage: service db migrate-to <postgres://user:password@host:5432/database>
Copies this data folder's catalogue (SQLite) into an EMPTY PostgreSQL database:
the schema, then every table in batches, then row counts and checksums are
compared. All in one transaction: on any failure the database stays empty.
The SQLite file is only read. Stop the service first (the data folder lock).
Exit codes: 0 copied and verified, 1 failed (rolled back), 2 wrong, unreachable
or non-empty database, or a catalogue this version cannot copy.`;

export async function dbCommand(argv: string[], config: Config): Promise<number> {
  const { positionals } = parse(argv, {}, USAGE);
  const [sub, url, ...extra] = positionals;
  if (sub !== 'migrate-to' || !url || extra.length) throw new UsageError(USAGE.trim());
  const dirs = layout(config.dataDirResolved);
  if (!existsSync(dirs.db)) {
    console.error(`no catalogue to copy: ${dirs.db} does not exist (SERVICE_DATA_DIR)`);
    return 2;
  }
  // A running service would keep writing to SQLite after the snapshot: the copy would be stale at once.
  const release = acquireLock(dirs);
  try {
    console.log(`copying ${dirs.db} into ${redactUrl(url)}`);
    const t0 = Date.now();
    const tables = await copySqliteToPostgres(dirs.db, url, { progress: (line) => console.log(`  ${line}`) });
    const rows = tables.reduce((n, t) => n + t.rows, 0);
    console.log(`copied and verified ${tables.length} tables, ${rows} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${dirs.db} is unchanged`);
    return 0;
  } catch (e) {
    if (e instanceof DatabaseUrlError || e instanceof CopyRefused) {
      console.error(e.message);
      return 2;
    }
    console.error(`migrate-to failed, nothing was kept in the target database: ${(e as Error).message}`);
    return 1;
  } finally {
    release();
  }
}
