import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TenantsRepo } from './tenants.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(() => t?.close());

test('tenants are listed in id order as scopes, tenant 1 first', async () => {
  const repo = new TenantsRepo(t.db);
  assert.deepEqual(await repo.list(), [{ tenant_id: 1 }], 'the migration seeds tenant 1');
  await t.db.async.sql("INSERT INTO tenants (id, slug, name, created_at) VALUES (3, 'c', 'C', ?), (2, 'b', 'B', ?)", ['2026-12-07', '2026-12-07']);
  assert.deepEqual(await repo.list(), [{ tenant_id: 1 }, { tenant_id: 2 }, { tenant_id: 3 }]);
});
