/**
 * `db.async` on both databases (SQLite here; PostgreSQL in pg/pool.test.ts runs the same cases through
 * `asyncCases`): a unit of work commits whole or not at all, a failed statement ends it, and a
 * read-decide-write raced by many callers stays exact.
 */
import { test } from 'node:test';
import { openDatabase } from './index';
import { asyncCases } from '../../test/helpers/async-db-cases';
import { tempDir } from '../../test/helpers/tools';

test('db.async on SQLite', async (t) => {
  const dir = tempDir('filedock-async-');
  const db = openDatabase(`${dir.dir}/a.sqlite`);
  try {
    await asyncCases(t, db);
  } finally {
    await db.close();
    dir.cleanup();
  }
});
