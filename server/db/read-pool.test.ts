/**
 * Reads aside on SQLite (read-pool.ts): reader threads with their own read-only connections see what was
 * committed, keep the event loop free, answer SQLite's errors as errors, and a thread that dies fails only
 * its own statement: the next one gets a new thread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from './index';
import type { Worker } from 'node:worker_threads';
import { ReadPool, type Reader } from './read-pool';
import { tempDir } from '../../test/helpers/tools';

/** A statement that keeps SQLite busy for a while (hundreds of ms here) and returns one row. */
const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c';

test('reads aside on SQLite', async (t) => {
  const dir = tempDir('filedock-readpool-');
  const db = openDatabase(`${dir.dir}/r.sqlite`);
  t.after(async () => {
    await db.close();
    dir.cleanup();
  });

  await t.test('a read sees the writes committed before it, in every form of statement', async () => {
    await db.async.run(db.k.insertInto('meta').values({ key: 'readpool', value: 'one' }));
    assert.deepEqual(await db.async.aside.sql('SELECT value FROM meta WHERE key = ?', ['readpool']), [{ value: 'one' }]);
    await db.async.run(db.k.updateTable('meta').set({ value: 'two' }).where('key', '=', 'readpool'));
    assert.deepEqual(await db.async.aside.sql('SELECT key, value FROM meta WHERE key = @k', { k: 'readpool' }, { raw: true }), [['readpool', 'two']]);
    assert.deepEqual(await db.async.aside.all(db.k.selectFrom('meta').select('value').where('key', '=', 'readpool')), [{ value: 'two' }]);
  });

  await t.test('the event loop runs while a read does', async () => {
    const order: string[] = [];
    const read = db.async.aside.sql<{ n: number }>(SLOW).then((rows) => order.push(`read ${rows[0].n}`));
    await new Promise((r) => setTimeout(r, 1)).then(() => order.push('timer'));
    await read;
    assert.deepEqual(order, ['timer', 'read 3000000']);
  });

  await t.test("SQLite's error is the statement's; a write is refused; parameters that cannot be sent fail; the threads go on", async () => {
    await assert.rejects(db.async.aside.sql('SELECT ? AS x', [() => 1]), /could not be cloned/);
    await assert.rejects(db.async.aside.sql('SELEC 1'), (e: Error & { code?: string }) => /syntax error/.test(e.message) && e.code === 'SQLITE_ERROR');
    await assert.rejects(db.async.aside.sql("INSERT INTO meta (key, value) VALUES ('x', 'y')"), /rows only|readonly/);
    assert.equal((await db.async.first(db.k.selectFrom('meta').select('key').where('key', '=', 'x'))) ?? null, null);
    assert.deepEqual(await db.async.aside.sql('SELECT 1 AS one'), [{ one: 1 }]);
  });
});

/** A pool whose threads the test can end, as a crash would. */
class Exposed extends ReadPool {
  threads: Worker[] = [];
  protected override start(): Reader {
    const r = super.start();
    this.threads.push(r.worker);
    return r;
  }
}

test('a reader thread that dies fails its statement only, and the next statement gets a new thread', async (t) => {
  const dir = tempDir('filedock-readpool-');
  const file = `${dir.dir}/r.sqlite`;
  const pool = new Exposed(file, { size: 2, cacheKib: 2048 });
  t.after(async () => {
    await pool.close();
    dir.cleanup();
  });
  // No file yet: the thread cannot open it and exits; its statement says so.
  await assert.rejects(pool.sql('SELECT 1', [], false), /the database reader thread stopped \(.*\) while it ran a statement/);
  const db = openDatabase(file);
  t.after(() => db.close());
  assert.deepEqual(await pool.sql('SELECT 1 AS one', [], false), [{ one: 1 }]);
  // Two statements on two threads; the first thread ends under its statement, the other answers.
  const [first, second] = [pool.sql(SLOW, [], false), pool.sql<{ n: number }>(SLOW, [], false)];
  const [a, b] = pool.threads.slice(-2);
  assert.notEqual(a, b);
  await a.terminate();
  await assert.rejects(first, /the database reader thread stopped \(exit code 1\) while it ran a statement/);
  assert.deepEqual(await second, [{ n: 3000000 }]);
  const before = pool.threads.length;
  assert.deepEqual(await pool.sql('SELECT 2 AS two', [], false), [{ two: 2 }]);
  assert.deepEqual(await Promise.all([pool.sql('SELECT 3 AS n', [], false), pool.sql('SELECT 4 AS n', [], false)]), [[{ n: 3 }], [{ n: 4 }]]);
  assert.equal(pool.threads.length, before + 1, 'one new thread beside the one left: never more than two');
  // Closed: what waits fails, nothing more runs.
  const waiting = [pool.sql(SLOW, [], false), pool.sql(SLOW, [], false), pool.sql('SELECT 3', [], false)].map((w) =>
    assert.rejects(w, /the database is closed/),
  );
  await pool.close();
  await Promise.all(waiting);
  await assert.rejects(pool.sql('SELECT 4', [], false), /the database is closed/);
});
