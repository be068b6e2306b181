/**
 * The catalogue on PostgreSQL, behind the same synchronous `Db` the server
 * uses with SQLite (docs/postgresql.md, "the decision"): statements go
 * through the bridge; `sqlite` is a better-sqlite3-shaped handle over it (the
 * subset the repositories use), `k` compiles with Kysely's PostgreSQL
 * compiler. Values come back as better-sqlite3 gives them (int8 and booleans
 * as numbers: bridge.worker.ts).
 */
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type Database from 'better-sqlite3';
import type { DB } from '../tables';
import type { Db, OpenOptions } from '../index';
import { MIGRATIONS, type Migration } from '../migrations';
import { MetaStore } from '../meta';
import { DbWaits } from '../busy';
import { connectPostgres } from './connect';
import { migratePostgres } from './migrate';
import { PgBridge, namedToPositional } from './bridge';
import { openPool } from './pool';
import { pgDump } from './dump';
import type { ChangeChannel } from '../channel';

/** Migrates the database at `url`, then opens the bridge to it. */
export async function openPostgresDatabase(url: string, migrations: Migration[] = MIGRATIONS, o: OpenOptions = {}): Promise<Db> {
  const c = await connectPostgres(url);
  try {
    await migratePostgres(c, migrations);
  } finally {
    await c.end();
  }
  const bridge = await PgBridge.open({ url });
  const handle = new BridgeHandle(bridge);
  const sqlite = handle as unknown as Database.Database;
  const waits = new DbWaits(sqlite, o.writeWaitMs ?? 2000, o.busyTimeoutMs);
  const k = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new BridgeDriver(bridge),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const run = (q: Compilable<unknown>) => {
    const c = q.compile();
    if (ChangeCounters.touches(c.sql)) handle.counters.wrote(handle.inTransaction);
    return bridge.query(c.sql, c.parameters as unknown[]);
  };
  const pool = openPool(url, { max: o.poolSize, touchesCached: (sql) => ChangeCounters.touches(sql), wroteCached: () => handle.counters.wrote(false) });
  let closed = false;
  const base = {
    dialect: 'postgres' as const,
    sqlite,
    k,
    waits,
    attachChannel: (channel: ChangeChannel) => handle.counters.attach(channel),
    async: pool,
    all: <R>(q: Compilable<R>) => run(q).rows as R[],
    first: <R>(q: Compilable<R>) => run(q).rows[0] as R | undefined,
    run: (q: Compilable<unknown>) => run(q).rowCount,
    async snapshot(base: string) {
      await pgDump(url, `${base}.pgdump`);
      return `${base}.pgdump`;
    },
    async close() {
      if (closed) return;
      closed = true;
      waits.stop();
      await Promise.all([bridge.close(), pool.close()]);
    },
  };
  return { ...base, meta: new MetaStore(base) };
}

/** Kysely's async `execute()` over the bridge (the audit query uses it). */
class BridgeDriver implements Driver {
  constructor(private bridge: PgBridge) {}
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const bridge = this.bridge;
    return {
      async executeQuery<R>(c: { sql: string; parameters: readonly unknown[] }): Promise<QueryResult<R>> {
        const r = bridge.query<R>(c.sql, [...c.parameters]);
        return { rows: r.rows, numAffectedRows: BigInt(r.rowCount) };
      },
      streamQuery() {
        throw new Error('streaming is not supported over the bridge');
      },
    };
  }
  async beginTransaction() {
    this.bridge.query('BEGIN');
  }
  async commitTransaction() {
    this.bridge.query('COMMIT');
  }
  async rollbackTransaction() {
    this.bridge.query('ROLLBACK');
  }
  async releaseConnection() {}
  async destroy() {}
}

type Row = Record<string, unknown>;

class BridgeStatement {
  private named: { sql: string; names: string[] } | null;
  private touches: boolean;
  constructor(
    private handle: BridgeHandle,
    private sql: string,
    private mode: { pluck: boolean; raw: boolean } = { pluck: false, raw: false },
    private bound: unknown[] | null = null,
  ) {
    this.named = namedToPositional(sql);
    this.touches = ChangeCounters.touches(sql);
  }

  private get bridge(): PgBridge {
    return this.handle.bridge;
  }

  private exec(args: unknown[]) {
    let params = this.bound ?? args;
    let sql = this.sql;
    if (this.named && params.length === 1 && params[0] && typeof params[0] === 'object' && !Array.isArray(params[0])) {
      const o = params[0] as Row;
      sql = this.named.sql;
      params = this.named.names.map((n) => o[n]);
    }
    const values = params.map((p) => (typeof p === 'boolean' ? Number(p) : p));
    if (this.touches) this.handle.counters.wrote(this.handle.inTransaction);
    return this.bridge.query<Row>(sql, values, this.mode.pluck || this.mode.raw ? 'array' : undefined);
  }

  private shape(r: Row): unknown {
    return this.mode.pluck ? (r as unknown as unknown[])[0] : r;
  }

  get(...args: unknown[]) {
    const r = this.exec(args).rows[0];
    return r === undefined ? undefined : this.shape(r);
  }
  all(...args: unknown[]) {
    return this.exec(args).rows.map((r) => this.shape(r));
  }
  iterate(...args: unknown[]) {
    return this.all(...args)[Symbol.iterator]();
  }
  run(...args: unknown[]) {
    const changes = this.exec(args).rowCount;
    const bridge = this.bridge;
    return {
      changes,
      // The id an INSERT just drew from its identity: asked only when the caller reads it.
      get lastInsertRowid() {
        return bridge.query<{ id: number }>('SELECT lastval()::bigint AS id').rows[0].id;
      },
    };
  }
  pluck(on = true) {
    return new BridgeStatement(this.handle, this.sql, { ...this.mode, pluck: on }, this.bound);
  }
  raw(on = true) {
    return new BridgeStatement(this.handle, this.sql, { ...this.mode, raw: on }, this.bound);
  }
  bind(...args: unknown[]) {
    return new BridgeStatement(this.handle, this.sql, this.mode, args);
  }
  safeIntegers() {
    return this;
  }
}

/** A counter that differs at every read. */
/**
 * SQLite's change counters as the storages cache reads them (catalogue/storages.repo.ts): `total_changes()`
 * counts this instance's writes to the cached tables, `data_version` the other instances' (their notices on
 * the change channel; every notice after a reconnect too). A write inside a transaction is announced at its
 * COMMIT, so another instance never re-reads before the row is visible. Writes that touch the cached rows:
 * any statement naming `storages` or `storage_grants`, and deleting users (their grants go by cascade).
 */
const TOUCHES_CACHED = /\b(storages|storage_grants)\b|^\s*DELETE\s+FROM\s+"?users\b/i;
const READ_ONLY = /^\s*(SELECT|SHOW|EXPLAIN)\b/i;
const NOTICE = 'db.storages';

class ChangeCounters {
  own = 0;
  others = 0;
  private pending = false;
  private channel?: ChangeChannel;

  /** Statement texts are few (a Kysely query's text repeats on every run): each is tested once. */
  private static seen = new Map<string, boolean>();
  static touches(sql: string): boolean {
    let t = ChangeCounters.seen.get(sql);
    if (t === undefined) {
      t = !READ_ONLY.test(sql) && TOUCHES_CACHED.test(sql);
      // Texts with inlined lists vary without end: a full memo starts again rather than growing.
      if (ChangeCounters.seen.size >= 2_000) ChangeCounters.seen.clear();
      ChangeCounters.seen.set(sql, t);
    }
    return t;
  }
  /** Before a statement that `touches` the cached tables runs. */
  wrote(inTransaction: boolean): void {
    this.own++;
    if (inTransaction) this.pending = true;
    else this.announce();
  }
  ended(committed: boolean): void {
    if (this.pending && committed) this.announce();
    this.pending = false;
  }
  attach(channel: ChangeChannel): void {
    this.channel = channel;
    channel.subscribe((event) => {
      if (event === NOTICE || event === 'resync') this.others++;
    });
  }
  private announce(): void {
    this.channel?.publish(NOTICE, null);
  }
  counter(which: 'own' | 'others') {
    const get = () => this[which];
    return { get, pluck: () => ({ get }) };
  }
}

/** The better-sqlite3 surface the repositories use, over the bridge. */
class BridgeHandle {
  readonly open = true;
  private depth = 0;
  readonly counters = new ChangeCounters();
  constructor(readonly bridge: PgBridge) {}

  get inTransaction(): boolean {
    return this.depth > 0;
  }
  prepare(sql: string) {
    if (/^\s*SELECT total_changes\(\)\s*$/i.test(sql)) return this.counters.counter('own');
    if (/^\s*PRAGMA data_version\s*$/i.test(sql)) return this.counters.counter('others');
    return new BridgeStatement(this, sql);
  }
  exec(sql: string) {
    if (ChangeCounters.touches(sql)) this.counters.wrote(this.inTransaction);
    this.bridge.query(sql);
    return this;
  }
  /** SQLite tuning has no PostgreSQL meaning. */
  pragma() {
    return [];
  }
  /** better-sqlite3's transaction(fn): nested calls become savepoints. */
  transaction<A extends unknown[], T>(fn: (...a: A) => T) {
    const wrapped = (...a: A): T => {
      const sp = this.depth > 0 ? `sp${this.depth}` : null;
      this.bridge.query(sp ? `SAVEPOINT ${sp}` : 'BEGIN');
      this.depth++;
      try {
        const out = fn(...a);
        this.depth--;
        this.bridge.query(sp ? `RELEASE SAVEPOINT ${sp}` : 'COMMIT');
        if (!sp) this.counters.ended(true);
        return out;
      } catch (e) {
        this.depth--;
        if (!sp) this.counters.ended(false);
        try {
          this.bridge.query(sp ? `ROLLBACK TO SAVEPOINT ${sp}` : 'ROLLBACK');
        } catch {
          /* the connection is gone: the server rolled back */
        }
        throw e;
      }
    };
    return Object.assign(wrapped, { immediate: wrapped, deferred: wrapped, exclusive: wrapped, default: wrapped });
  }
  async backup(): Promise<never> {
    throw new Error('a PostgreSQL catalogue is copied with Db.snapshot (pg_dump)');
  }
}
