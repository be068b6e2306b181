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
  assert.equal(repo.value('trash_retention_days'), undefined);
  assert.equal(repo.seed('trash_retention_days', '14', '2026-12-05T00:00:00Z'), true);
  assert.equal(repo.seed('trash_retention_days', '99', '2026-12-05T00:00:01Z'), false, 'a second seed keeps the first value');
  assert.equal(repo.value('trash_retention_days'), '14');
  repo.put('trash_retention_days', '60', '2026-12-05T00:00:02Z');
  repo.put('allow_signup', 'true', '2026-12-05T00:00:02Z');
  assert.equal(repo.seed('trash_retention_days', '7', '2026-12-05T00:00:03Z'), false, 'a seed never overwrites an admin value');
  assert.equal(repo.value('trash_retention_days'), '60');
  assert.equal(repo.value('allow_signup'), 'true');
});
