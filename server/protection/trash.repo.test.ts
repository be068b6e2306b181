import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TrashRepo, type TrashRow } from './trash.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: TrashRepo;
let a = 0;
let b = 0;
before(async () => {
  t = await openTestDb();
  repo = new TrashRepo(asyncOnly(t.db));
  a = await testStorage(t.db, 'A');
  b = await testStorage(t.db, 'B');
});
after(() => t?.close());

const item = (storage_id: number, name: string, day: number, v: Partial<TrashRow> = {}) =>
  repo.insert({
    storage_id,
    orig_path: `docs/${name}`,
    trash_rel: `.service-trash/s${day}/${name}`,
    type: 'file',
    size: 10,
    reason: 'delete',
    deleted_by: null,
    deleted_by_email: 'a@example.test',
    deleted_at: `2026-12-${String(day).padStart(2, '0')}T00:00:00.000Z`,
    ...v,
  });

test('trash items on db.async: insert, by id, a page newest first with its total, file matches by size, hashes, age, removal', async () => {
  const one = await item(a, 'one.txt', 1);
  const two = await item(a, 'two', 2, { type: 'dir', size: 0 });
  const three = await item(a, 'three.txt', 3, { size: 20 });
  const other = await item(b, 'other.txt', 4);
  assert.equal(typeof one.id, 'number');
  assert.equal(one.sha256, null);
  assert.deepEqual(await repo.byId(two.id), two);
  assert.equal(await repo.byId(999_999), undefined);

  const page = await repo.list([a], 2, 0);
  assert.deepEqual(
    page.rows.map((r) => r.id),
    [three.id, two.id],
    'newest first, limited',
  );
  assert.equal(page.total, 3, 'the total of every page, a number on both databases');
  assert.deepEqual(
    (await repo.list([a], 2, 2)).rows.map((r) => r.id),
    [one.id],
  );
  assert.deepEqual(
    (await repo.list([a, b], 10, 0)).rows.map((r) => r.id),
    [other.id, three.id, two.id, one.id],
  );
  assert.deepEqual(await repo.list([], 10, 0), { rows: [], total: 0 });

  assert.deepEqual(
    (await repo.files([a])).map((r) => r.id),
    [three.id, one.id],
    'files only',
  );
  assert.deepEqual(
    (await repo.files([a, b], 10)).map((r) => r.id),
    [other.id, one.id],
    'of one size',
  );
  assert.deepEqual(await repo.files([]), []);

  await repo.setSha(one.id, 'ab'.repeat(32));
  assert.equal((await repo.byId(one.id))?.sha256, 'ab'.repeat(32));

  assert.deepEqual(
    (await repo.olderThan('2026-12-03T00:00:00.000Z')).map((r) => r.id),
    [one.id, two.id],
    'oldest first',
  );
  assert.deepEqual(
    (await repo.olderThan('2026-12-31T00:00:00.000Z', 1)).map((r) => r.id),
    [one.id],
  );

  // A purge and a restore of one item racing: both forget it, neither fails.
  await Promise.all([repo.remove(two.id), repo.remove(two.id)]);
  assert.equal(await repo.byId(two.id), undefined);
  assert.equal((await repo.list([a], 10, 0)).total, 2);
});
