/**
 * `db.async` on SQLite: statements run synchronously on the one better-sqlite3
 * connection (no worker, no extra hop: the promise is already settled when it
 * is returned) and a unit of work is driven to its end inside one IMMEDIATE
 * transaction, so nothing interleaves with it. `aside` alone runs on reader
 * threads (read-pool.ts). Writes that meet a lock held by
 * another process are retried off the event loop (busy.ts).
 */
import type Database from 'better-sqlite3';
import type { Compilable } from 'kysely';
import { driveSync, tx, type AsyncDb, type Step } from './async';
import type { DbWaits } from './busy';
import type { ReadPool } from './read-pool';
import { preparedCache } from './prepared';

const MAX_PREPARED = 200;

export function sqliteAsync(d: {
  sqlite: Database.Database;
  waits: DbWaits;
  /** Called after each statement ran: counts it when it writes (`Db.writes`). */
  wrote(st: Database.Statement): void;
  all<R>(q: Compilable<R>): R[];
  first<R>(q: Compilable<R>): R | undefined;
  run(q: Compilable<unknown>): number;
  /** Reader threads for `aside` (none for a database in memory: it runs here then). */
  readers: ReadPool | null;
}): AsyncDb {
  const statement = preparedCache(d.sqlite, MAX_PREPARED);
  const exec = (s: Step): unknown => {
    switch (s.op) {
      case 'all':
        return d.all(s.q);
      case 'first':
        return d.first(s.q);
      case 'run':
        return d.run(s.q);
      case 'sql': {
        const st = statement(s.text, s.raw);
        const args = Array.isArray(s.params) ? s.params : [s.params];
        const rows = st.reader ? st.all(...args) : (st.run(...args), []);
        d.wrote(st);
        return rows;
      }
    }
  };
  const all: AsyncDb['all'] = async (q) => d.all(q);
  const sql: AsyncDb['sql'] = async <R>(text: string, params: unknown[] | Record<string, unknown> = [], o: { raw?: boolean } = {}) =>
    exec({ op: 'sql', text, params, raw: !!o.raw }) as R[];
  const readers = d.readers;
  return {
    all,
    first: async (q) => d.first(q),
    run: (q) => d.waits.write(() => d.run(q), { transaction: false }),
    sql,
    unit: (body, o = {}) => d.waits.write(() => driveSync(body(tx), exec), { waitMs: o.waitMs }),
    read: async (body) => driveSync(body(tx), exec),
    // A database in memory has no file for a reader to open: its reads run here.
    aside: readers
      ? {
          all: async <R>(q: Compilable<R>) => {
            const c = q.compile();
            return readers.sql<R>(c.sql, c.parameters as unknown[], false);
          },
          sql: async <R>(text: string, params: unknown[] | Record<string, unknown> = [], o: { raw?: boolean } = {}) => readers.sql<R>(text, params, !!o.raw),
        }
      : { all, sql },
    stats: () => null,
    close: async () => await d.readers?.close(),
  };
}
