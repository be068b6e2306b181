/**
 * A reader thread (read-pool.ts): its own read-only connection to the database file runs the statements the
 * main thread sends, one at a time, and posts back the rows or the error. WAL lets it read beside the
 * service's writing connection; each statement is its own read transaction, so it sees every write committed
 * before it started.
 *
 * workerData: { file, cacheKib }. Messages in: { id, text, params, raw }. Out: { id, rows } | { id, error }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { preparedCache } from './prepared';

const MAX_PREPARED = 200;
const { file, cacheKib } = workerData as { file: string; cacheKib: number };

const db = new Database(file, { readonly: true, fileMustExist: true });
// A bounded page cache of its own (heap, not a map of the file: a read error stays an error SQLite answers,
// never a SIGBUS that would end the whole process).
db.pragma(`cache_size = -${cacheKib}`);
db.pragma('temp_store = MEMORY');
// A reader waits only while a checkpoint resets the WAL index: off the event loop, a short wait is harmless.
db.pragma('busy_timeout = 1000');

const statement = preparedCache(db, MAX_PREPARED);

parentPort!.on('message', ({ id, text, params, raw }: { id: number; text: string; params: unknown[] | Record<string, unknown>; raw: boolean }) => {
  try {
    const st = statement(text, raw);
    if (!st.reader) throw new Error('a reader thread runs statements that return rows only');
    const rows = st.all(...(Array.isArray(params) ? params : [params]));
    parentPort!.postMessage({ id, rows });
  } catch (e) {
    const err = e as { message?: string; code?: unknown };
    parentPort!.postMessage({ id, error: { message: String(err.message ?? e), code: typeof err.code === 'string' ? err.code : undefined } });
  }
});
