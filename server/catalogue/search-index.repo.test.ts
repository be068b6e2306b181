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

const indexed = async (): Promise<string[]> => (await t.db.async.all(t.db.k.selectFrom('search_fts').select('name').orderBy('rowid'))).map((r) => r.name ?? '');

test('a slice indexes the names it lacks once, also when two passes over it race', async () => {
  assert.equal(await repo.maxNodeId(), 0, 'no node yet');
  const sid = await testStorage(t.db);
  const ids = await testNodes(
    t.db,
    sid,
    Array.from({ length: 12 }, (_, i) => ({ path: `n${i}.txt` })),
  );
  assert.equal(await repo.maxNodeId(), ids.at(-1));
  assert.equal(await repo.indexSlice(ids[0], ids[4]), 4, 'the first four');
  const [a, b] = await Promise.all([repo.indexSlice(ids[0], ids[11] + 1), repo.indexSlice(ids[0], ids[11] + 1)]);
  assert.equal(a + b, 8, 'the other eight, each by one of the two passes');
  assert.deepEqual(
    await indexed(),
    ids.map((_, i) => `n${i}.txt`),
  );
  assert.equal(await repo.indexSlice(ids[0], ids[11] + 1), 0, 'nothing left to add');
});
