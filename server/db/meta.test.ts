import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(() => t?.close());

test('of instances recording one fact at once, every one keeps the first value; set replaces it', async () => {
  const values = ['a', 'b', 'c', 'd', 'e'];
  const kept = await Promise.all(values.map((v) => t.db.meta.setIfAbsent('race', v)));
  assert.equal(new Set(kept).size, 1, `one value kept: ${kept}`);
  assert.equal(await t.db.meta.get('race'), kept[0]);
  assert.equal(await t.db.meta.fact('race'), kept[0]);
  await t.db.meta.set('race', 'z');
  assert.equal(await t.db.meta.get('race'), 'z');
  assert.equal(await t.db.meta.fact('race'), kept[0], 'a fact, once seen, is kept in memory');
  assert.equal(await t.db.meta.get('never'), undefined);
});

test('of requests claiming one value at once exactly one wins, once more after it changed', async () => {
  await t.db.meta.set('used', 'old-secret');
  const wins = await Promise.all([1, 2, 3, 4].map(() => t.db.meta.claim('used', 'new-secret')));
  assert.deepEqual(wins.filter(Boolean).length, 1, `${wins}`);
  assert.equal(await t.db.meta.claim('used', 'new-secret'), false);
  assert.equal(await t.db.meta.claim('fresh', 'x'), true, 'a key never recorded is claimed');
});
