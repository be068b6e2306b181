import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SettingsRepo } from './settings.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: SettingsRepo;
before(async () => {
  t = await openTestDb();
  repo = new SettingsRepo(t.db);
});
after(() => t?.close());

test('put replaces, seed stores only a key never stored', async () => {
  assert.equal(await repo.value('trash_retention_days'), undefined);
  assert.equal(await repo.seed('trash_retention_days', '14', '2026-12-05T00:00:00Z'), true);
  assert.equal(await repo.seed('trash_retention_days', '99', '2026-12-05T00:00:01Z'), false, 'a second seed keeps the first value');
  assert.equal(await repo.value('trash_retention_days'), '14');
  await repo.put('trash_retention_days', '60', '2026-12-05T00:00:02Z');
  await repo.put('allow_signup', 'true', '2026-12-05T00:00:02Z');
  assert.equal(await repo.seed('trash_retention_days', '7', '2026-12-05T00:00:03Z'), false, 'a seed never overwrites an admin value');
  assert.equal(await repo.value('trash_retention_days'), '60');
  assert.equal(await repo.value('allow_signup'), 'true');
  assert.deepEqual((await repo.all()).map((r) => [r.key, r.value]).sort(), [
    ['allow_signup', 'true'],
    ['trash_retention_days', '60'],
  ]);
});

test('two seeds of one key at once: exactly one stores its value', async () => {
  const won = await Promise.all(['1', '2', '3'].map((v) => repo.seed('backup_keep', v, '2026-12-05T00:00:04Z')));
  assert.equal(won.filter(Boolean).length, 1);
  assert.equal(await repo.value('backup_keep'), String(won.indexOf(true) + 1));
});
