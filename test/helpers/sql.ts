/**
 * A test's own look at the database, on SQLite and PostgreSQL alike (through `db.async`; the service has no
 * synchronous face on PostgreSQL). `?` parameters; counts come back as numbers on both.
 */
import type { Db } from '../../server/db';

/** Every row (or nothing, for a write). */
export const sqlRows = <R = any>(db: Db, text: string, ...params: unknown[]): Promise<R[]> => db.async.sql<R>(text, params);

/** The first row, or undefined. */
export const sqlRow = async <R = any>(db: Db, text: string, ...params: unknown[]): Promise<R | undefined> => (await db.async.sql<R>(text, params))[0];

/** The first column of the first row, or undefined. */
export const sqlValue = async <T = any>(db: Db, text: string, ...params: unknown[]): Promise<T> =>
  ((await db.async.sql<unknown[]>(text, params, { raw: true }))[0]?.[0] ?? undefined) as T;

/** The first column of every row. */
export const sqlColumn = async <T = any>(db: Db, text: string, ...params: unknown[]): Promise<T[]> =>
  (await db.async.sql<unknown[]>(text, params, { raw: true })).map((r) => r[0] as T);
