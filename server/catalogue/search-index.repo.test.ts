import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SearchIndexRepo } from './search-index.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';

let t: TestDb;
let repo: SearchIndexRepo;
before(async () => {
  t = await openTestDb();
  repo = new SearchIndexRepo(t.db);
});
after(() => t?.close());

const ONE = [{ tenant_id: 1 }];
const indexed = async (): Promise<string[]> => (await t.db.async.all(t.db.k.selectFrom('search_fts').select('name').orderBy('rowid'))).map((r) => r.name ?? '');

test('a slice indexes the names it lacks once, also when two passes over it race', async () => {
  assert.equal(await repo.maxNodeId(ONE), 0, 'no node yet');
  const sid = await testStorage(t.db);
  const ids = await testNodes(
    t.db,
    sid,
    Array.from({ length: 12 }, (_, i) => ({ path: `n${i}.txt` })),
  );
  assert.equal(await repo.maxNodeId(ONE), ids.at(-1));
  assert.equal(await repo.indexSlice(ONE, ids[0], ids[4]), 4, 'the first four');
  const [a, b] = await Promise.all([repo.indexSlice(ONE, ids[0], ids[11] + 1), repo.indexSlice(ONE, ids[0], ids[11] + 1)]);
  assert.equal(a + b, 8, 'the other eight, each by one of the two passes');
  assert.deepEqual(
    await indexed(),
    ids.map((_, i) => `n${i}.txt`),
  );
  assert.equal(await repo.indexSlice(ONE, ids[0], ids[11] + 1), 0, 'nothing left to add');
});

test('only the named tenants’ nodes are indexed, and the highest id is theirs', async () => {
  const sid2 = await testStorage(t.db, 'Files', { tenant_id: 2 });
  const sid3 = await testStorage(t.db, 'Files', { tenant_id: 3 });
  const [two] = await testNodes(t.db, { id: sid2, tenant_id: 2 }, [{ path: 'two.txt' }]);
  const [three] = await testNodes(t.db, { id: sid3, tenant_id: 3 }, [{ path: 'three.txt' }]);
  assert.equal(await repo.maxNodeId([{ tenant_id: 2 }]), two, 'not tenant 3’s newer node');
  assert.equal(await repo.maxNodeId([]), 0, 'no tenant: nothing');
  assert.equal(await repo.indexSlice([{ tenant_id: 2 }], two, three + 1), 1, 'tenant 2’s name only');
  assert.ok(!(await indexed()).includes('three.txt'));
  assert.equal(await repo.indexSlice([{ tenant_id: 2 }, { tenant_id: 3 }], two, three + 1), 1, 'then tenant 3’s');
});
