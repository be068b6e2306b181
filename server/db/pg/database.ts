/**
 * The catalogue on PostgreSQL (docs/postgresql.md): every statement runs on
 * the pool (`db.async`, pool.ts) while the event loop serves other requests;
 * `k` only builds SQL with Kysely's PostgreSQL compiler. There is no
 * synchronous face: `sqlite` is undefined, as is every better-sqlite3 detail.
 */
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection, type Driver } from 'kysely';
import type { DB } from '../tables';
import type { Db, OpenOptions } from '../index';
import { guardPlugins } from '../tenant-guard';
import { MIGRATIONS, type Migration } from '../migrations';
import { MetaStore } from '../meta';
import { DbWaits } from '../busy';
import { connectPostgres } from './connect';
import { migratePostgres } from './migrate';
import { openPool } from './pool';
import { pgDump } from './dump';

/** Migrates the database at `url`, then opens the pool to it. */
export async function openPostgresDatabase(url: string, migrations: Migration[] = MIGRATIONS, o: OpenOptions = {}): Promise<Db> {
  const c = await connectPostgres(url);
  try {
    await migratePostgres(c, migrations);
  } finally {
    await c.end();
  }
  const k = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new CompileOnly(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: guardPlugins(o.tenantGuard),
  });
  const pool = openPool(url, { max: o.poolSize, applicationName: o.applicationName });
  const waits = new DbWaits(null, o.writeWaitMs ?? 2000);
  let closed = false;
  const base = {
    dialect: 'postgres' as const,
    k,
    waits,
    async: pool,
    async snapshot(base: string) {
      await pgDump(url, `${base}.pgdump`);
      return `${base}.pgdump`;
    },
    async close() {
      if (closed) return;
      closed = true;
      waits.stop();
      await pool.close();
    },
  };
  return { ...base, meta: new MetaStore(base) };
}

/** Kysely here builds statements only; `db.async` runs them, so a query run through Kysely itself is a bug. */
class CompileOnly implements Driver {
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> {
    throw new Error('statements run on db.async: Kysely only compiles them on PostgreSQL');
  }
  async beginTransaction() {}
  async commitTransaction() {}
  async rollbackTransaction() {}
  async releaseConnection() {}
  async destroy() {}
}
