import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreUpdatesRepo } from './updates.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: StoreUpdatesRepo;
before(async () => {
  t = await openTestDb();
  repo = new StoreUpdatesRepo(t.db);
});
after(() => t?.close());

test('a notice is claimed once per app version, also by claims made at the same time; a newer version claims again', async () => {
  const claims = await Promise.all(Array.from({ length: 8 }, () => repo.claimNotice('a', '1.1.0')));
  assert.equal(claims.filter(Boolean).length, 1);
  assert.equal(await repo.claimNotice('a', '1.1.0'), false);
  assert.equal(await repo.claimNotice('a', '1.2.0'), true);
  assert.equal(await repo.claimNotice('b', '1.1.0'), true, 'per app');
});

test('automatic updates: off by default, switched per app, kept across notices, forgotten on remove', async () => {
  assert.deepEqual([...(await repo.autoUpdating())], []);
  await repo.setAuto('a', true);
  await repo.setAuto('c', true);
  await repo.setAuto('c', false);
  assert.equal(await repo.claimNotice('a', '2.0.0'), true);
  assert.deepEqual([...(await repo.autoUpdating())], ['a']);
  await repo.remove('a');
  assert.deepEqual([...(await repo.autoUpdating())], []);
  assert.equal(await repo.claimNotice('a', '2.0.0'), true, 'a removed row rings again');
});
