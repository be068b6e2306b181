import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ThumbStates, type ThumbState } from './thumb-states.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: ThumbStates;
let s = 0;
const ONE = [{ tenant_id: 1 }];
/** A node of tenant 1 as its own statements name it. */
const n1 = (id: number) => ({ id, tenant_id: 1 });
before(async () => {
  t = await openTestDb();
  repo = new ThumbStates(asyncOnly(t.db));
  s = await testStorage(t.db);
});
after(() => t?.close());

interface Seed {
  path: string;
  type?: 'file' | 'dir';
  state?: ThumbState | null;
  deleted?: boolean;
}
/** Node rows in INSERTs of 500; their ids in the order given. */
async function nodes(seeds: Seed[], storage = { id: s, tenant_id: 1 }): Promise<number[]> {
  const k = t.db.k;
  const rows = seeds.map((n) => ({
    tenant_id: storage.tenant_id,
    storage_id: storage.id,
    dir: n.path.includes('/') ? n.path.slice(0, n.path.lastIndexOf('/')) : '',
    name: n.path.slice(n.path.lastIndexOf('/') + 1),
    path: n.path,
    type: n.type ?? 'file',
    size: 10,
    mtime: 1000,
    sort_key: n.path,
    thumb_state: n.state ?? null,
    deleted_at: n.deleted ? '2026-12-01T00:00:00.000Z' : null,
    updated_at: '2026-12-01T00:00:00.000Z',
  }));
  return t.db.async.unit(function* (tx) {
    const ids: number[] = [];
    for (let i = 0; i < rows.length; i += 500)
      for (const r of yield* tx.all(
        k
          .insertInto('nodes')
          .values(rows.slice(i, i + 500))
          .returning('id'),
      ))
        ids.push(r.id);
    return ids;
  });
}
const state = async (id: number) => (await repo.byId(ONE, id))?.thumb_state;

test('a file moves to pending unless ready; an outcome is recorded only for the size and mtime the run read', async () => {
  const [file, dir, ready] = await nodes([{ path: 'one.jpg' }, { path: 'pics', type: 'dir' }, { path: 'done.jpg', state: 'ready' }]);
  assert.equal((await repo.byId(ONE, file))?.path, 'one.jpg');
  assert.equal(await repo.byId(ONE, 999_999), undefined);
  assert.equal(await repo.markPending(n1(file)), true);
  assert.equal(await state(file), 'pending');
  assert.equal(await repo.markPending(n1(dir)), false, 'a folder has no thumbnail');
  assert.equal(await repo.markPending(n1(ready)), false, 'ready is never re-run');
  assert.equal(await repo.finish(n1(file), 'failed', 'x'.repeat(2000), { size: 10, mtime: 999 }), false, 'written since the run read it');
  assert.equal(await state(file), 'pending');
  assert.equal(await repo.finish(n1(file), 'failed', 'x'.repeat(2000), { size: 10, mtime: 1000 }), true);
  const row = await repo.byId(ONE, file);
  assert.equal(row?.thumb_state, 'failed');
  assert.equal(row?.thumb_error?.length, 1000, 'the error is cut to 1000 characters');
});

test('a finished thumbnail and a write racing for one file: ready is never put back to pending', async () => {
  for (let round = 0; round < 5; round++) {
    const [id] = await nodes([{ path: `race-${round}.jpg`, state: 'pending' }]);
    const [moved, finished, many] = await Promise.all([
      repo.markPending(n1(id)),
      repo.finish(n1(id), 'ready', null, { size: 10, mtime: 1000 }),
      repo.markPendingMany(ONE, [id]),
    ]);
    assert.equal(finished, true);
    const after = await state(id);
    if (after === 'pending') assert.fail(`round ${round}: pending after ready (markPending ${moved}, markPendingMany ${many.join()})`);
    assert.equal(after, 'ready');
  }
});

test('a sync batch of 1,200 files goes to pending in one call, ready ones and folders stay; the backlog pages by id', async () => {
  const seeds: Seed[] = [];
  for (let i = 0; i < 1200; i++) seeds.push({ path: `batch/f${i}.jpg`, state: i % 100 === 0 ? 'ready' : null });
  seeds.push({ path: 'batch/sub', type: 'dir' });
  const ids = await nodes(seeds);
  const moved = await repo.markPendingMany(ONE, ids);
  const expected = ids.filter((_, i) => i < 1200 && i % 100 !== 0);
  assert.deepEqual(
    [...moved].sort((a, b) => a - b),
    expected,
  );
  assert.deepEqual(await repo.markPendingMany(ONE, []), []);

  const first = await repo.pendingAfter(ONE, ids[0] - 1, 50);
  assert.equal(first.length, 50);
  assert.deepEqual(first, expected.slice(0, 50), 'in id order');
  assert.deepEqual(await repo.pendingAfter(ONE, first[49], 2), expected.slice(50, 52));

  const present = await repo.existing(ONE, [...ids, 999_998, 999_999]);
  assert.equal(present.size, ids.length, 'every row found across several statements; unknown ids not');
  assert.equal(present.has(999_999), false);
});

test('backfill candidates: live files without a thumbnail, the trash and version folders left out, failed and skipped on request', async () => {
  const [a, b, , , , deleted, failed, skipped] = await nodes([
    { path: 'cand/a.jpg' },
    { path: 'cand/b.jpg', state: 'pending' },
    { path: '.service-trash/x/c.jpg' },
    { path: 'cand/.versions/d.jpg' },
    { path: 'cand/ready.jpg', state: 'ready' },
    { path: 'cand/gone.jpg', deleted: true },
    { path: 'cand/f.jpg', state: 'failed' },
    { path: 'cand/s.jpg', state: 'skipped' },
  ]);
  const q = { tenants: ONE, storageId: s, retryFailed: false, retrySkipped: false, afterId: a - 1, limit: 100 };
  assert.deepEqual(
    (await repo.candidates(q)).map((n) => n.id),
    [a, b],
  );
  assert.deepEqual(
    (await repo.candidates({ ...q, retryFailed: true, retrySkipped: true })).map((n) => n.id),
    [a, b, failed, skipped],
  );
  assert.deepEqual(
    (await repo.candidates({ ...q, afterId: a, limit: 1 })).map((n) => n.id),
    [b],
  );
  assert.ok(!(await repo.candidates({ ...q, retryFailed: true })).some((n) => n.id === deleted));
});

test('tenants: another tenant’s nodes are neither found, moved to pending, finished, paged, counted as present nor candidates', async () => {
  const s2 = { id: await testStorage(t.db, 'Files', { tenant_id: 2 }), tenant_id: 2 };
  const [theirs] = await nodes([{ path: 'cand/a.jpg', state: 'pending' }], s2);
  assert.equal(await repo.byId(ONE, theirs), undefined);
  assert.equal((await repo.byId([{ tenant_id: 2 }], theirs))?.tenant_id, 2);
  assert.equal(await repo.markPending(n1(theirs)), false, 'not moved in tenant 1');
  assert.equal(await repo.finish(n1(theirs), 'ready', null, { size: 10, mtime: 1000 }), false, 'not finished in tenant 1');
  assert.deepEqual(await repo.markPendingMany(ONE, [theirs]), []);
  assert.ok(!(await repo.pendingAfter(ONE, theirs - 1, 10)).includes(theirs), 'not paged for tenant 1');
  assert.deepEqual(await repo.pendingAfter([{ tenant_id: 2 }], theirs - 1, 10), [theirs]);
  assert.equal((await repo.existing(ONE, [theirs])).size, 0);
  assert.deepEqual(await repo.candidates({ tenants: ONE, storageId: s2.id, retryFailed: true, retrySkipped: true, afterId: 0, limit: 10 }), []);
  assert.equal((await repo.byId([{ tenant_id: 2 }], theirs))?.thumb_state, 'pending', 'untouched');
});
