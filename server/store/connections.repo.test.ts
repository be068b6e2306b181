import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreConnectionsRepo } from './connections.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: StoreConnectionsRepo;
before(async () => {
  t = await openTestDb();
  repo = new StoreConnectionsRepo(t.db);
});
after(() => t?.close());

test('a connection is added once per URL, switched, refreshed (a failure keeps the last good name and ETag) and removed', async () => {
  const c = { url: 'https://apps.example/', public_key_pem: 'PEM', fingerprint: 'f'.repeat(64) };
  const id = await repo.add(c, null);
  assert.ok(id);
  assert.equal(await repo.add(c, null), null, 'the same URL twice');
  assert.equal((await repo.get(id))!.enabled, true);
  assert.equal(await repo.setEnabled(id, false), true);
  assert.equal((await repo.list())[0].enabled, false);
  await repo.refreshed(id, { name: 'Apps', etag: '"e1"' });
  await repo.refreshed(id, { error: 'store_unreachable: timeout' });
  const row = (await repo.get(id))!;
  assert.deepEqual([row.name, row.etag, row.last_error], ['Apps', '"e1"', 'store_unreachable: timeout']);
  await repo.refreshed(id, { name: 'Apps 2', etag: null });
  assert.equal((await repo.get(id))!.last_error, null);
  assert.equal(await repo.remove(id), true);
  assert.equal(await repo.get(id), null);
  assert.equal(await repo.setEnabled(id, true), false);
});
