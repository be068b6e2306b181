/**
 * The cases every `db.async` implementation must pass (server/db/async.test.ts on SQLite,
 * server/db/pg/pool.test.ts on PostgreSQL). They use the `meta` table: the one every schema has.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Db } from '../../server/db';
import { isAppError } from '../../server/errors';

export async function asyncCases(t: TestContext, db: Db): Promise<void> {
  const k = db.k;
  const value = async (key: string) => (await db.async.first(k.selectFrom('meta').select('value').where('key', '=', key)))?.value;

  await t.test('single statements: write, read, count', async () => {
    assert.equal(await db.async.run(k.insertInto('meta').values({ key: 'a', value: '1' })), 1);
    assert.equal(await value('a'), '1');
    assert.deepEqual(await db.async.all(k.selectFrom('meta').select('key').where('key', '=', 'a')), [{ key: 'a' }]);
    assert.deepEqual(await db.async.sql<{ value: string }>('SELECT value FROM meta WHERE key = @key', { key: 'a' }), [{ value: '1' }]);
    assert.deepEqual(await db.async.sql<[string]>('SELECT value FROM meta WHERE key = ?', ['a'], { raw: true }), [['1']]);
  });

  await t.test('a unit commits every statement and returns its value', async () => {
    const out = await db.async.unit(function* (tx) {
      yield* tx.run(k.insertInto('meta').values({ key: 'u1', value: 'x' }));
      yield* tx.run(k.updateTable('meta').set({ value: 'y' }).where('key', '=', 'u1'));
      return (yield* tx.first(k.selectFrom('meta').select('value').where('key', '=', 'u1')))?.value;
    });
    assert.equal(out, 'y', 'a unit reads its own writes');
    assert.equal(await value('u1'), 'y');
  });

  await t.test('a unit whose body throws leaves nothing written', async () => {
    await assert.rejects(
      db.async.unit(function* (tx) {
        yield* tx.run(k.insertInto('meta').values({ key: 'u2', value: 'x' }));
        throw new Error('decided against it');
      }),
      /decided against it/,
    );
    assert.equal(await value('u2'), undefined);
  });

  await t.test('a failed statement ends the unit: the earlier writes roll back', async () => {
    await assert.rejects(
      db.async.unit(function* (tx) {
        yield* tx.run(k.insertInto('meta').values({ key: 'u3', value: 'x' }));
        yield* tx.run(k.insertInto('meta').values({ key: 'a', value: 'duplicate' }));
      }),
    );
    assert.equal(await value('u3'), undefined);
    assert.equal(await value('a'), '1');
  });

  await t.test('40 racing read-decide-write units under a cap of 25: exactly 25 pass, the counter is exact', async () => {
    await db.async.run(k.insertInto('meta').values({ key: 'n', value: '0' }));
    const CAP = 25;
    const take = () =>
      db.async.unit(
        function* (tx) {
          const n = Number((yield* tx.first(k.selectFrom('meta').select('value').where('key', '=', 'n')))!.value);
          if (n >= CAP) throw new Error('cap reached');
          yield* tx.run(
            k
              .updateTable('meta')
              .set({ value: String(n + 1) })
              .where('key', '=', 'n'),
          );
          return n + 1;
        },
        { isolation: 'serializable' },
      );
    const results = await Promise.allSettled(Array.from({ length: 40 }, take));
    const passed = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value);
    const refused = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    assert.equal(passed.length, CAP, `passed: ${passed.length}; refused: ${[...new Set(refused)].join('; ')}`);
    assert.deepEqual(
      [...passed].sort((a, b) => a - b),
      Array.from({ length: CAP }, (_, i) => i + 1),
      'each value handed out once',
    );
    assert.ok(
      refused.every((r) => /cap reached/.test(r)),
      [...new Set(refused)].join('; '),
    );
    assert.equal(await value('n'), String(CAP));
  });

  await t.test('errors are the envelope codes the routes map: a unique violation is not database_busy', async () => {
    const e = await db.async.run(k.insertInto('meta').values({ key: 'a', value: 'again' })).catch((x: unknown) => x);
    assert.ok(e instanceof Error && !(isAppError(e) && e.code === 'database_busy'));
  });
}
