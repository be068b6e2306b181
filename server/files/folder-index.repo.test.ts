import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FolderIndexRepo } from './folder-index.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: FolderIndexRepo;
let sid = 0;
before(async () => {
  t = await openTestDb();
  repo = new FolderIndexRepo(asyncOnly(t.db)); // every statement on db.async
  sid = await testStorage(t.db);
  const ids = await testNodes(t.db, sid, [
    { path: 'd', type: 'dir' },
    { path: 'd/file10.txt', size: 5, mtime: 3 },
    { path: 'd/file9.txt', size: 5, mtime: 1 },
    { path: 'd/big.bin', size: 90, mtime: 2 },
    { path: 'd/sub', type: 'dir' },
    { path: 'd/gone.txt' },
    { path: 'e/other.txt' },
  ]);
  await t.db.async.run(t.db.k.updateTable('nodes').set({ deleted_at: '2026-12-01T00:00:00.000Z' }).where('tenant_id', '=', 1).where('id', '=', ids[5]));
});
after(() => t?.close());

const names = (rows: Array<[string, ...unknown[]]>) => rows.map((r) => (JSON.parse(r[0]) as { name: string }).name);

test('a folder’s live entries: counted, and read whole in each sort, folders first, natural names, ties by id', async () => {
  assert.equal(await repo.size({ id: sid, tenant_id: 1 }, 'd'), 4, 'not the deleted one, nor another folder’s');
  assert.equal(await repo.size({ id: sid, tenant_id: 1 }, 'nowhere'), 0);
  assert.deepEqual(names(await repo.rows({ id: sid, tenant_id: 1 }, 'd', 'name', false, 'viewer')), ['sub', 'big.bin', 'file9.txt', 'file10.txt']);
  assert.deepEqual(
    names(await repo.rows({ id: sid, tenant_id: 1 }, 'd', 'size', false, 'viewer')),
    ['sub', 'file9.txt', 'file10.txt', 'big.bin'],
    'equal sizes by natural name',
  );
  assert.deepEqual(names(await repo.rows({ id: sid, tenant_id: 1 }, 'd', 'modified', true, 'viewer')), ['sub', 'file9.txt', 'big.bin', 'file10.txt']);
  const [, big] = (await repo.rows({ id: sid, tenant_id: 1 }, 'd', 'size', false, 'editor')).slice(2);
  assert.deepEqual([big[1], Number(big[2])], ['file', 90], 'the keyset: type and sort value');
  assert.equal((JSON.parse(big[0]) as { perm: string }).perm, 'editor');
});
