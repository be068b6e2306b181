/**
 * `db.async` on a real PostgreSQL cluster: the cases SQLite passes (test/helpers/async-db-cases.ts), plus
 * what only a server over a network shows: the event loop runs during a unit, a connection cut in the
 * middle of a unit rolls it back and answers `database_busy`, a full pool queue answers 503 at once, and a
 * stopped server is `database_busy` until it is back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { commitInDoubt, openPostgresDatabase, type Db } from '../index';
import { isAppError } from '../../errors';
import { openPool } from './pool';
import { asyncCases } from '../../../test/helpers/async-db-cases';
import { needPostgres, startPostgres, type PgCluster } from '../../../test/helpers/postgres';

const skip = needPostgres();
const busy = (e: unknown) => isAppError(e) && e.code === 'database_busy';

describe('db.async on PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let url: string;
  let db: Db;

  before(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase('pool');
    db = await openPostgresDatabase(url);
  });
  after(async () => {
    await db?.close();
    await cluster?.destroy();
  });

  test('the cases SQLite passes', async (t) => {
    await asyncCases(t, db);
  });

  test('the event loop runs while a unit waits for the server', async () => {
    const unit = db.async.unit(function* (tx) {
      yield* tx.sql('SELECT pg_sleep(0.2)');
      return 'unit';
    });
    const first = await Promise.race([unit, new Promise((r) => setImmediate(() => r('event loop')))]);
    assert.equal(first, 'event loop');
    assert.equal(await unit, 'unit');
  });

  test('a connection cut in the middle of a unit: rolled back, database_busy, and the pool serves again', async () => {
    const k = db.k;
    const e = await db.async
      .unit(function* (tx) {
        yield* tx.run(k.insertInto('meta').values({ key: 'cut', value: 'half' }));
        yield* tx.sql('SELECT pg_terminate_backend(pg_backend_pid())');
      })
      .catch((x: unknown) => x);
    assert.ok(busy(e), `database_busy, got ${String(e)}`);
    assert.equal(await db.async.first(k.selectFrom('meta').select('value').where('key', '=', 'cut')), undefined, 'nothing half-written');
  });

  test('a full pool queue answers database_busy at once instead of queueing without bound', async () => {
    const small = openPool(url, { max: 2, maxWaiting: 2 });
    try {
      const held = Array.from({ length: 4 }, () => small.sql('SELECT pg_sleep(0.5)'));
      const t0 = Date.now();
      const refused = await small.sql('SELECT 1').catch((x: unknown) => x);
      assert.ok(busy(refused), 'the fifth statement is refused');
      assert.ok(Date.now() - t0 < 400, 'at once, not after the others');
      await Promise.all(held);
      assert.deepEqual(await small.sql('SELECT 1 AS one'), [{ one: 1 }], 'served again once the queue drains');
    } finally {
      await small.close();
    }
  });

  test('a server that hangs: before COMMIT the unit is rolled back; at COMMIT it is database_busy and in doubt, and lands on waking', async () => {
    const small = openPool(url, { max: 2, statementTimeoutMs: 1000 });
    const k = db.k;
    const stopped: number[] = [];
    // The body stops its own backend (SIGSTOP, as a hung machine) after its last statement, or before one more.
    const hangs = (key: string, atCommit: boolean) =>
      small.unit(function* (tx) {
        yield* tx.run(k.insertInto('meta').values({ key, value: 'x' }));
        const [{ pid }] = yield* tx.sql<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        process.kill(pid, 'SIGSTOP');
        stopped.push(pid);
        if (!atCommit) yield* tx.sql('SELECT 1');
      });
    const value = (key: string) => db.async.first(k.selectFrom('meta').select('value').where('key', '=', key));
    try {
      const before = await hangs('hung-before', false).catch((x: unknown) => x);
      const atCommit = await hangs('hung-commit', true).catch((x: unknown) => x);
      assert.ok(busy(before) && !commitInDoubt(before), `busy, not in doubt: ${String(before)}`);
      assert.ok(busy(atCommit) && commitInDoubt(atCommit), `busy and in doubt: ${String(atCommit)}`);
      assert.equal(await commitInDoubt(atCommit)!.decided(), false, 'undecided while its server process sleeps');
    } finally {
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
    }
    let landed: unknown;
    for (let i = 0; i < 50 && !landed; i++) landed = (await value('hung-commit')) ?? (await new Promise((r) => setTimeout(r, 100)));
    assert.ok(landed, 'the COMMIT the hung server had read landed when it woke');
    const e = await hangs('probe', true).catch((x: unknown) => x);
    process.kill(stopped.at(-1)!, 'SIGCONT');
    let decided = false;
    for (let i = 0; i < 50 && !decided; i++) decided = (await commitInDoubt(e)!.decided()) || (await new Promise((r) => setTimeout(() => r(false), 100)));
    assert.ok(decided, 'decided once the woken process saw its client gone');
    assert.equal(await value('hung-before'), undefined, 'the unit cut before its COMMIT left nothing');
    await small.close();
  });

  test('retryUnique: a unit that meets a row a concurrent writer just made runs again and sees it; without, the violation stands', async () => {
    const k = db.k;
    const race = (key: string, retryUnique: boolean) => {
      const unit = db.async.unit(
        function* (t) {
          const seen = yield* t.first(k.selectFrom('meta').select('value').where('key', '=', key));
          yield* t.sql('SELECT pg_sleep(0.3)'); // the other writer inserts meanwhile
          if (!seen) yield* t.run(k.insertInto('meta').values({ key, value: 'unit' }));
          return seen ? `saw ${seen.value}` : 'inserted';
        },
        { retryUnique },
      );
      const other = new Promise((r) => setTimeout(r, 100)).then(() => db.async.run(k.insertInto('meta').values({ key, value: 'other' })));
      return Promise.all([unit.catch((e: unknown) => e), other]);
    };
    assert.deepEqual((await race('unique-retry', true))[0], 'saw other');
    const [e] = await race('unique-plain', false);
    assert.ok(e instanceof Error && (e as { code?: string }).code === '23505', `the violation stands: ${String(e)}`);
  });

  test('a stopped server is database_busy, and statements run again once it is back', async () => {
    await cluster.stop('immediate');
    try {
      await assert.rejects(db.async.sql('SELECT 1'), busy);
      await assert.rejects(
        db.async.unit(function* (tx) {
          yield* tx.sql('SELECT 1');
        }),
        busy,
      );
    } finally {
      await cluster.start();
    }
    let ok: unknown;
    for (let i = 0; i < 100 && !ok; i++) ok = await db.async.sql('SELECT 1 AS one').catch(() => new Promise((r) => setTimeout(() => r(undefined), 100)));
    assert.deepEqual(ok, [{ one: 1 }]);
  });
});
