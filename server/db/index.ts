/**
 * SQLite through better-sqlite3 (WAL, foreign keys) with a typed Kysely
 * facade. Migrations run on open, each inside its own transaction. A server
 * connection waits for a lock held by another process only asynchronously
 * (busy.ts). Never hold a transaction across driver or network I/O (DESIGN:
 * Transactions).
 */
import { availableParallelism } from 'node:os';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, type Compilable } from 'kysely';
import { guardPlugins } from './tenant-guard';
import type { DB } from './tables';
import { MIGRATIONS, type Migration } from './migrations';
import { inOrder } from './migrations/order';
import { MetaStore } from './meta';
import type { AsyncDb } from './async';
import { sqliteAsync } from './async-sqlite';
import { DbWaits } from './busy';
import { ReadPool } from './read-pool';

export { MetaStore } from './meta';
export { InstancesRepo, cliAppName, serverAppName } from './instances.repo';
export { TenantsRepo } from './tenants.repo';
export { withinLimit } from './tenant-lock';
export { TenantPurgeRepo, PURGE_ORDER, type ScopedTable } from './tenant-purge.repo';
export { DbWaits, isBusy, busyError, commitInDoubt, untilFree, BUSY_TIMEOUT_MS, type BusyStats, type InDoubt, type WriteOptions } from './busy';

// PostgreSQL's modules (and the pg driver) load on first use: a SQLite install never loads them.
export type { TableCopy } from './pg/copy';
export { DatabaseUrlError, redactUrl } from './pg/url-error';
type PgDatabase = typeof import('./pg/database');
type PgDump = typeof import('./pg/dump');
export const openPostgresDatabase = async (...a: Parameters<PgDatabase['openPostgresDatabase']>) => (await import('./pg/database')).openPostgresDatabase(...a);
export const copySqliteToPostgres = async (...a: Parameters<typeof import('./pg/copy').copySqliteToPostgres>) =>
  (await import('./pg/copy')).copySqliteToPostgres(...a);
export const pgRestore = async (...a: Parameters<PgDump['pgRestore']>) => (await import('./pg/dump')).pgRestore(...a);
export const pgRelationCount = async (...a: Parameters<PgDump['pgRelationCount']>) => (await import('./pg/dump')).pgRelationCount(...a);
export { localChannel, openPgChannel, CHANNEL, type ChangeChannel, type ChannelListener } from './channel';
export type { DB } from './tables';
export { tx, type AsyncDb, type Tx, type Unit, type UnitOptions } from './async';
export { pingDatabase } from './ping';
export { isForeignKeyViolation } from './constraint';
export { escapeLike } from './like';
export { DEFAULT_TENANT, type TenantScope } from './tenant-tables';
export type Sqlite = Database.Database;
export type Statement = Database.Statement;

export interface Db {
  /** Which database: SQL that is not portable picks its form by this (docs/postgresql.md). */
  dialect: 'sqlite' | 'postgres';
  /**
   * SQLite only (undefined on PostgreSQL): the in-process better-sqlite3 handle, for SQLite's own checks
   * (the storages cache's `data_version`, the lock tests) and tools. Statements of the service go through `async`.
   */
  sqlite?: Sqlite;
  /**
   * SQLite only: how many writing statements `async` has run on this connection (each statement of a unit
   * counts, also one that rolled back or changed no row; cascades ride on their statement). A copy of a table
   * read synchronously (storages.repo.ts) compares it instead of asking SQLite on every read; another
   * process's commits show in `PRAGMA data_version`, not here, and writes made on `sqlite` directly not at all.
   */
  writes?(): number;
  /** Typed query builder: it builds the SQL that `async` runs. */
  k: Kysely<DB>;
  /** One-time instance facts (the `meta` table's only writer). */
  meta: MetaStore;
  /**
   * Writes a consistent copy of the whole database beside `base` (the path without an extension) and
   * returns the file: SQLite's online backup (`.sqlite`), or `pg_dump`'s custom format (`.pgdump`).
   */
  snapshot(base: string): Promise<string>;
  /** Lock waits (SQLite: `waits.write(fn)` retries a write transaction off the event loop, busy.ts) and their counters. */
  waits: DbWaits;
  /**
   * The asynchronous data layer (async.ts): promises on both databases, units of work as generators.
   * SQLite answers in-process; PostgreSQL runs on a pool while the event loop serves other requests.
   */
  async: AsyncDb;
  close(): Promise<void>;
}

const MAX_PREPARED = 500;
/**
 * Reader threads for `db.async.aside` (read-pool.ts): one per core beside the event loop's, at most two (on
 * two cores, one: a second reader beside the main thread only made them take turns, 31 against 17–24
 * common-word searches a second; docs/benchmarks.md); each with a 64 MiB page cache (a million-file
 * catalogue's search index is ~60 MB: its hits' pages stay in memory). Started only by a search: a service
 * that never searches never holds their memory.
 */
const READERS = { size: Math.max(1, Math.min(2, availableParallelism() - 1)), cacheKib: 64 * 1024 };

export interface OpenOptions {
  /** How long a request's write waits for a lock held elsewhere before `database_busy` (default 2 s). */
  writeWaitMs?: number;
  /**
   * The most one statement blocks inside SQLite (default 5 ms, for a server's
   * event loop; a command-line tool may pass seconds).
   */
  busyTimeoutMs?: number;
  /** PostgreSQL: the most connections `db.async` opens (default: pg/pool.ts, sized for the machine). */
  poolSize?: number;
  /** PostgreSQL: the connections' `application_name`, naming this process (db/instances.repo.ts). */
  applicationName?: string;
  /** The tenant guard (tenant-guard.ts): on, off, or over these tables; default: on in tests and in multi-tenant mode. */
  tenantGuard?: boolean | readonly string[];
}

/** Opens (and creates) the database file, applies pending migrations. */
/** A SQLite `Db`, whose in-process handle is always there. */
export type SqliteDb = Db & { dialect: 'sqlite'; sqlite: Sqlite; writes(): number };

export function openDatabase(file: string, migrations: Migration[] = MIGRATIONS, o: OpenOptions = {}): SqliteDb {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  // Migrations run before anything serves: they may wait for a lock like any tool.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma('cache_size = -32000');
  migrate(sqlite, migrations);
  const waits = new DbWaits(sqlite, o.writeWaitMs ?? 2000, o.busyTimeoutMs);
  const k = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }), plugins: guardPlugins(o.tenantGuard) });
  // Kysely builds the SQL (portable across dialects); better-sqlite3 runs it in-process for `db.async`
  // (async-sqlite.ts), each text prepared once.
  const prepared = new Map<string, Database.Statement>();
  let writes = 0;
  const wrote = (st: Database.Statement) => {
    if (!st.readonly) writes++;
  };
  const stmt = (q: Compilable<unknown>) => {
    const c = q.compile();
    let st = prepared.get(c.sql);
    if (!st) {
      if (prepared.size >= MAX_PREPARED) prepared.clear(); // IN lists of many lengths must not grow it without bound
      prepared.set(c.sql, (st = sqlite.prepare(c.sql)));
    }
    return { st, params: c.parameters as unknown[] };
  };
  let closed = false;
  const async = sqliteAsync({
    sqlite,
    waits,
    wrote,
    all: <R>(q: Compilable<R>) => {
      const { st, params } = stmt(q);
      const rows = st.all(...params) as R[];
      wrote(st);
      return rows;
    },
    first: <R>(q: Compilable<R>) => {
      const { st, params } = stmt(q);
      const row = st.get(...params) as R | undefined;
      wrote(st);
      return row;
    },
    run: (q: Compilable<unknown>) => {
      const { st, params } = stmt(q);
      const { changes } = st.run(...params);
      wrote(st);
      return changes;
    },
    readers: sqlite.memory ? null : new ReadPool(sqlite.name, READERS),
  });
  return {
    dialect: 'sqlite' as const,
    sqlite,
    writes: () => writes,
    k,
    waits,
    async,
    meta: new MetaStore({ k, async }),
    async snapshot(base: string) {
      await sqlite.backup(`${base}.sqlite`);
      return `${base}.sqlite`;
    },
    async close() {
      if (closed) return;
      closed = true;
      waits.stop();
      await async.close();
      await k.destroy();
      // Kysely closes the handle only once it has run a statement of its own; the async face and the
      // prepared statements use the handle directly.
      if (sqlite.open) sqlite.close();
    },
  };
}

/** Applies migrations not yet recorded in `_migrations`; returns the names applied. */
export function migrate(sqlite: Sqlite, migrations: Migration[]): string[] {
  sqlite.exec('CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  const done = new Set((sqlite.prepare('SELECT name FROM _migrations').all() as Array<{ name: string }>).map((r) => r.name));
  const applied: string[] = [];
  const record = sqlite.prepare('INSERT INTO _migrations (name, applied_at) VALUES (?, ?)');
  for (const m of inOrder(migrations)) {
    if (done.has(m.name)) continue;
    // The pragma is a no-op inside a transaction: it is set around it.
    const fks = sqlite.pragma('foreign_keys', { simple: true });
    if (m.foreignKeysOff) sqlite.pragma('foreign_keys = OFF');
    try {
      sqlite.transaction(() => {
        sqlite.exec(m.sql);
        if (m.foreignKeysOff && sqlite.prepare('PRAGMA foreign_key_check').all().length) throw new Error(`migration ${m.name} broke a foreign key`);
        record.run(m.name, new Date().toISOString());
      })();
    } finally {
      if (m.foreignKeysOff) sqlite.pragma(`foreign_keys = ${fks ? 'ON' : 'OFF'}`);
    }
    applied.push(m.name);
  }
  return applied;
}

export const nowIso = (): string => new Date().toISOString();
