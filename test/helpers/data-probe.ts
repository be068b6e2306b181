/**
 * A child server's database read (and, between a crash and the restart, written) straight from a test:
 * the SQLite file in its data folder, or under TEST_DATABASE=postgres the database test-database.ts gave
 * that folder. Statements take `?` parameters on both.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { toPositional } from '../../server/db/pg/params';
import { databaseUrl } from './test-database';

export interface DataProbe {
  /** The first column of the first row (undefined when there is none). */
  value<T = unknown>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  run(sql: string, ...params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

export async function openDataProbe(data: string): Promise<DataProbe> {
  const url = await databaseUrl(data);
  if (!url) {
    const db = new Database(join(data, 'filedock.sqlite'), { fileMustExist: true });
    const column = async <T>(sql: string, ...params: unknown[]) =>
      db
        .prepare(sql)
        .raw()
        .all(...params)
        .map((r) => (r as T[])[0]);
    return {
      value: async <T>(sql: string, ...params: unknown[]) => (await column<T>(sql, ...params))[0],
      run: async (sql, ...params) => void db.prepare(sql).run(...params),
      close: async () => void db.close(),
    };
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const column = async <T>(sql: string, ...params: unknown[]) =>
    (await c.query({ text: toPositional(sql), values: params, rowMode: 'array' })).rows.map((r) => (r as T[])[0]);
  return {
    value: async <T>(sql: string, ...params: unknown[]) => (await column<T>(sql, ...params))[0],
    run: async (sql, ...params) => void (await c.query(toPositional(sql), params)),
    close: () => c.end(),
  };
}
