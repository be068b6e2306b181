import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ThumbStates, type ThumbState } from './thumb-states.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: ThumbStates;
let s = 0;
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
async function nodes(seeds: Seed[]): Promise<number[]> {
  const k = t.db.k;
  const rows = seeds.map((n) => ({
    storage_id: s,
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
const state = async (id: number) => (await repo.byId(id))?.thumb_state;

test('a file moves to pending unless ready; an outcome is recorded only for the size and mtime the run read', async () => {
  const [file, dir, ready] = await nodes([{ path: 'one.jpg' }, { path: 'pics', type: 'dir' }, { path: 'done.jpg', state: 'ready' }]);
  assert.equal((await repo.byId(file))?.path, 'one.jpg');
  assert.equal(await repo.byId(999_999), undefined);
  assert.equal(await repo.markPending(file), true);
  assert.equal(await state(file), 'pending');
  assert.equal(await repo.markPending(dir), false, 'a folder has no thumbnail');
  assert.equal(await repo.markPending(ready), false, 'ready is never re-run');
  assert.equal(await repo.finish(file, 'failed', 'x'.repeat(2000), { size: 10, mtime: 999 }), false, 'written since the run read it');
  assert.equal(await state(file), 'pending');
  assert.equal(await repo.finish(file, 'failed', 'x'.repeat(2000), { size: 10, mtime: 1000 }), true);
  const row = await repo.byId(file);
  assert.equal(row?.thumb_state, 'failed');
  assert.equal(row?.thumb_error?.length, 1000, 'the error is cut to 1000 characters');
});

test('a finished thumbnail and a write racing for one file: ready is never put back to pending', async () => {
  for (let round = 0; round < 5; round++) {
    const [id] = await nodes([{ path: `race-${round}.jpg`, state: 'pending' }]);
    const [moved, finished, many] = await Promise.all([
      repo.markPending(id),
      repo.finish(id, 'ready', null, { size: 10, mtime: 1000 }),
      repo.markPendingMany([id]),
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
  const moved = await repo.markPendingMany(ids);
  const expected = ids.filter((_, i) => i < 1200 && i % 100 !== 0);
  assert.deepEqual(
    [...moved].sort((a, b) => a - b),
    expected,
  );
  assert.deepEqual(await repo.markPendingMany([]), []);

  const first = await repo.pendingAfter(ids[0] - 1, 50);
  assert.equal(first.length, 50);
  assert.deepEqual(first, expected.slice(0, 50), 'in id order');
  assert.deepEqual(await repo.pendingAfter(first[49], 2), expected.slice(50, 52));

  const present = await repo.existing([...ids, 999_998, 999_999]);
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
  const q = { storageId: s, retryFailed: false, retrySkipped: false, afterId: a - 1, limit: 100 };
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
