import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VersionsRepo } from './versions.repo';
import { openTestDb, testStorage } from '../../test/helpers/test-database';

test('version rows: newest first, the ones beyond a keep count, paths over it, removal by id, on this run’s database', async () => {
  const { db, close } = await openTestDb();
  try {
    const s = await testStorage(db);
    const repo = new VersionsRepo(db);
    const doc = { storage_id: s, rel: 'docs/a.txt' };
    const snap = (rel: string, i: number) =>
      repo.insert({
        storage_id: s,
        path: rel,
        version_rel: `.versions/${rel}/${i}`,
        size: i,
        mtime: 1000 + i,
        created_by: null,
        created_at: `2026-12-0${i}T00:00:00.000Z`,
      });
    const ids: number[] = [];
    for (let i = 1; i <= 5; i++) ids.push((await snap(doc.rel, i)).id);
    await snap('docs/b.txt', 1);
    assert.equal(typeof ids[0], 'number', 'ids are numbers on both databases');
    assert.deepEqual(
      (await repo.list(doc)).map((v) => v.id),
      [...ids].reverse(),
    );
    assert.equal((await repo.byId(doc, ids[0]))?.size, 1);
    assert.equal(await repo.byId({ storage_id: s, rel: 'docs/b.txt' }, ids[0]), undefined, 'another file’s id is not found');
    assert.deepEqual(
      (await repo.beyond(doc, 3)).map((v) => v.id),
      [ids[1], ids[0]],
      'the oldest beyond the newest 3',
    );
    assert.deepEqual(await repo.beyond(doc, 5), []);
    assert.deepEqual(await repo.over(3), [{ storage_id: s, path: doc.rel }]);
    // Two trims racing for the same old rows: each id is removed once, the rest stay.
    const [a, b] = await Promise.all([repo.remove([ids[0], ids[1]]), repo.remove([ids[0], ids[1]])]);
    assert.equal(a + b, 2);
    assert.equal(await repo.remove([]), 0);
    assert.deepEqual(
      (await repo.list(doc)).map((v) => v.id),
      [ids[4], ids[3], ids[2]],
    );
  } finally {
    await close();
  }
});
