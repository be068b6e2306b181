/**
 * Database waits (busy.ts) against a real lock: a second connection inside
 * BEGIN EXCLUSIVE, as another program would hold it. Writes wait off the
 * event loop and succeed after a short hold, give up with `database_busy`
 * after a long one; background work (a sync batch, an op's outcome) waits
 * and loses nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DEFAULT_TENANT, openDatabase, isBusy } from './index';
import { AppError } from '../errors';
import { JobQueue } from '../jobs';
import { SyncEngine } from '../catalogue/sync';
import { tempDir } from '../../test/helpers/tools';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fixture(writeWaitMs = 300) {
  const t = tempDir('filedock-busy-');
  const file = join(t.dir, 'db.sqlite');
  const db = openDatabase(file, undefined, { writeWaitMs });
  const other = new Database(file);
  const hold = () => other.exec("BEGIN EXCLUSIVE; INSERT INTO meta (key, value) VALUES ('held', '1')");
  const release = () => other.exec('ROLLBACK');
  return { db, hold, release, close: async () => (other.close(), await db.close(), t.cleanup()) };
}

/**
 * How often a 2 ms timer ran while `p` ran: a wait that blocks the event loop for a hold lets it run
 * once at most, one off the loop lets it run throughout (counted, not timed: a loaded machine delays
 * timers but does not stop them).
 */
async function loopTicks<T>(p: Promise<T>): Promise<[T | unknown, number]> {
  let ticks = 0;
  const timer = setInterval(() => void ticks++, 2);
  try {
    return [await p.catch((e) => e), ticks];
  } finally {
    clearInterval(timer);
  }
}

test('a write meets a held database: waits off the event loop, succeeds after a short hold, 503 after a long one', async () => {
  const f = fixture(600);
  try {
    const insert = f.db.sqlite.prepare("INSERT INTO meta (key, value) VALUES (?, 'v')");
    f.hold();
    // An unwrapped statement fails at once (5 ms inside SQLite at most, not the write's 600 ms) and is a BUSY error.
    const t0 = performance.now();
    assert.throws(
      () => insert.run('plain'),
      (e) => isBusy(e),
    );
    assert.ok(performance.now() - t0 < 500);
    f.db.waits.sawBusy(); // what the error middleware does
    assert.throws(
      () => insert.run('plain2'),
      (e) => isBusy(e),
    );
    assert.equal(f.db.sqlite.pragma('busy_timeout', { simple: true }), 0, 'while a hold is known, statements do not wait inside SQLite');

    // Blocking waits would stall the loop for the whole hold (250 ms, then 600 ms).
    setTimeout(f.release, 250);
    const [ok, ticks] = await loopTicks(f.db.waits.write(() => insert.run('waited')));
    assert.equal((ok as { changes: number }).changes, 1);
    assert.ok(ticks >= 5, `the event loop ran ${ticks} times during the wait`);

    f.hold();
    const t2 = performance.now();
    const [err, ticks2] = await loopTicks(f.db.waits.write(() => insert.run('never')));
    assert.ok(err instanceof AppError && err.code === 'database_busy' && err.params.retry_after === 2, String(err));
    assert.ok(performance.now() - t2 >= 580 && performance.now() - t2 < 10_000);
    assert.ok(ticks2 >= 5, `the event loop ran ${ticks2} times during the wait`);
    f.release();
    const s = f.db.waits.snapshot();
    assert.equal(s.recovered, 1);
    assert.equal(s.gave_up, 1);
    assert.ok(s.busy >= 3);
    assert.equal(f.db.sqlite.prepare("SELECT count(*) FROM meta WHERE key IN ('waited', 'never', 'held')").pluck().get(), 1);
    await sleep(300);
    assert.equal(f.db.waits.snapshot().held, false, 'quiet again: statements get their few milliseconds back');
  } finally {
    await f.close();
  }
});

test('background work rides out a hold: a sync batch and an op outcome are written once the database is free', async () => {
  const f = fixture();
  const alive = setInterval(() => undefined, 1000); // the queue's and the retries' timers are unref'd
  try {
    f.db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
    const engine = new SyncEngine(f.db);
    const driver = {
      async *list() {
        for (let i = 0; i < 50; i++) yield { name: `f${i}.txt`, type: 'file' as const, size: i, mtime: 1_700_000_000_000 };
      },
    };
    const q = new JobQueue(f.db, { concurrency: 1, pollMs: 20 });
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    q.register('slow', async () => {
      started();
      await sleep(100);
      return { done: true };
    });
    const id = await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT });
    await q.start();
    await running;
    f.hold();
    const counts = engine.folder({ id: 1, tenant_id: 1 }, driver as never, '');
    await sleep(400); // the op finished its work meanwhile; its outcome and the batch wait for the lock
    assert.equal((await q.get(DEFAULT_TENANT, id))!.status, 'running');
    f.release();
    assert.equal((await counts).added, 50);
    assert.equal(f.db.sqlite.prepare('SELECT count(*) FROM nodes WHERE storage_id = 1').pluck().get(), 50);
    await q.idle();
    assert.equal((await q.get(DEFAULT_TENANT, id))!.status, 'completed');
    assert.deepEqual((await q.get(DEFAULT_TENANT, id))!.result, { done: true });
    await q.stop();
  } finally {
    clearInterval(alive);
    await f.close();
  }
});
