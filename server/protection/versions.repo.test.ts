import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VersionsRepo } from './versions.repo';
import { openTestDb, testStorage } from '../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

test('version rows: newest first, the ones beyond a keep count, paths over it, removal by id, on this run’s database', async () => {
  const { db, close } = await openTestDb();
  try {
    const s = await testStorage(db);
    const repo = new VersionsRepo(db);
    const doc = { storage_id: s, rel: 'docs/a.txt' };
    const snap = (rel: string, i: number) =>
      repo.insert(T1, {
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
      (await repo.list(T1, doc)).map((v) => v.id),
      [...ids].reverse(),
    );
    assert.equal((await repo.byId(T1, doc, ids[0]))?.size, 1);
    assert.equal(await repo.byId(T1, { storage_id: s, rel: 'docs/b.txt' }, ids[0]), undefined, 'another file’s id is not found');
    assert.deepEqual(
      (await repo.beyond(T1, doc, 3)).map((v) => v.id),
      [ids[1], ids[0]],
      'the oldest beyond the newest 3',
    );
    assert.deepEqual(await repo.beyond(T1, doc, 5), []);
    assert.deepEqual(await repo.over(T1, 3), [{ storage_id: s, path: doc.rel }]);
    // Two trims racing for the same old rows: each id is removed once, the rest stay.
    const [a, b] = await Promise.all([repo.remove(T1, [ids[0], ids[1]]), repo.remove(T1, [ids[0], ids[1]])]);
    assert.equal(a + b, 2);
    assert.equal(await repo.remove(T1, []), 0);
    assert.deepEqual(
      (await repo.list(T1, doc)).map((v) => v.id),
      [ids[4], ids[3], ids[2]],
    );
  } finally {
    await close();
  }
});

test('two tenants: another tenant’s versions are neither listed, found by id, counted, trimmed nor removed', async () => {
  const { db, close } = await openTestDb();
  try {
    const repo = new VersionsRepo(db);
    const s1 = await testStorage(db);
    const s2 = await testStorage(db, 'Files', { tenant_id: 2 });
    const snap = (s: TenantScope, storage_id: number, i: number) =>
      repo.insert(s, {
        storage_id,
        path: 'a.txt',
        version_rel: `.versions/a.txt/${i}`,
        size: i,
        mtime: i,
        created_by: null,
        created_at: '2026-12-01T00:00:00.000Z',
      });
    const mine = await snap(T1, s1, 1);
    const theirs = [await snap(T2, s2, 1), await snap(T2, s2, 2), await snap(T2, s2, 3)];
    assert.equal(theirs[0].tenant_id, 2, 'written in its storage’s tenant');
    const p2 = { storage_id: s2, rel: 'a.txt' };
    assert.deepEqual(await repo.list(T1, p2), [], 'not listed');
    assert.equal(await repo.byId(T1, p2, theirs[0].id), undefined, 'not found by id');
    assert.deepEqual(await repo.beyond(T1, p2, 1), [], 'not trimmed');
    assert.deepEqual(await repo.over(T1, 1), [], 'not counted for the sweep');
    assert.equal(await repo.remove(T1, [theirs[0].id, mine.id]), 1, 'only its own is removed');
    assert.deepEqual(
      (await repo.list(T2, p2)).map((v) => v.id),
      theirs.map((v) => v.id).reverse(),
    );
    assert.deepEqual(await repo.over(T2, 1), [{ storage_id: s2, path: 'a.txt' }]);
  } finally {
    await close();
  }
});
