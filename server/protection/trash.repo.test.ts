import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TrashRepo, type TrashRow } from './trash.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';
import { DEFAULT_TENANT, type TenantScope } from '../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: TrashRepo;
let a = 0;
let b = 0;
let c = 0;
before(async () => {
  t = await openTestDb();
  repo = new TrashRepo(asyncOnly(t.db));
  a = await testStorage(t.db, 'A');
  b = await testStorage(t.db, 'B');
  c = await testStorage(t.db, 'A', T2);
});
after(() => t?.close());

const item = (storage_id: number, name: string, day: number, v: Partial<TrashRow> = {}, s: TenantScope = T1) =>
  repo.insert(s, {
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
  assert.deepEqual(await repo.byId(T1, two.id), two);
  assert.equal(await repo.byId(T1, 999_999), undefined);

  const page = await repo.list(T1, [a], 2, 0);
  assert.deepEqual(
    page.rows.map((r) => r.id),
    [three.id, two.id],
    'newest first, limited',
  );
  assert.equal(page.total, 3, 'the total of every page, a number on both databases');
  assert.deepEqual(
    (await repo.list(T1, [a], 2, 2)).rows.map((r) => r.id),
    [one.id],
  );
  assert.deepEqual(
    (await repo.list(T1, [a, b], 10, 0)).rows.map((r) => r.id),
    [other.id, three.id, two.id, one.id],
  );
  assert.deepEqual(await repo.list(T1, [], 10, 0), { rows: [], total: 0 });

  assert.deepEqual(
    (await repo.files(T1, [a])).map((r) => r.id),
    [three.id, one.id],
    'files only',
  );
  assert.deepEqual(
    (await repo.files(T1, [a, b], 10)).map((r) => r.id),
    [other.id, one.id],
    'of one size',
  );
  assert.deepEqual(await repo.files(T1, []), []);

  await repo.setSha(T1, one.id, 'ab'.repeat(32));
  assert.equal((await repo.byId(T1, one.id))?.sha256, 'ab'.repeat(32));

  assert.deepEqual(
    (await repo.olderThan(T1, '2026-12-03T00:00:00.000Z')).map((r) => r.id),
    [one.id, two.id],
    'oldest first',
  );
  assert.deepEqual(
    (await repo.olderThan(T1, '2026-12-31T00:00:00.000Z', 1)).map((r) => r.id),
    [one.id],
  );

  // A purge and a restore of one item racing: both forget it, neither fails.
  await Promise.all([repo.remove(T1, two.id), repo.remove(T1, two.id)]);
  assert.equal(await repo.byId(T1, two.id), undefined);
  assert.equal((await repo.list(T1, [a], 10, 0)).total, 2);
});

test('two tenants: another tenant’s trash item is neither listed, found by id, matched, hashed, swept nor removed', async () => {
  const theirs = await item(c, 'secret.txt', 1, { size: 77 }, T2);
  assert.equal(theirs.tenant_id, 2, 'written in its storage’s tenant');
  assert.equal(await repo.byId(T1, theirs.id), undefined, 'not found by id');
  // Even asked for the storage by its id (a caller's mistake), the tenant keeps it out.
  assert.ok(!(await repo.list(T1, [a, b, c], 100, 0)).rows.some((r) => r.id === theirs.id), 'not listed');
  assert.equal((await repo.list(T1, [c], 100, 0)).total, 0, 'not counted');
  assert.deepEqual(await repo.files(T1, [c], 77), [], 'not matched by content');
  await repo.setSha(T1, theirs.id, 'cd'.repeat(32));
  assert.ok(!(await repo.olderThan(T1, '2030-01-01T00:00:00.000Z')).some((r) => r.id === theirs.id), 'not swept');
  await repo.remove(T1, theirs.id);
  const kept = await repo.byId(T2, theirs.id);
  assert.equal(kept?.sha256, null, 'not changed');
  assert.deepEqual(
    (await repo.list(T2, [c], 10, 0)).rows.map((r) => r.id),
    [theirs.id],
    'not removed: its own tenant lists it',
  );
  assert.deepEqual(
    (await repo.olderThan(T2, '2030-01-01T00:00:00.000Z')).map((r) => r.id),
    [theirs.id],
  );
  await repo.remove(T2, theirs.id);
  assert.equal(await repo.byId(T2, theirs.id), undefined);
});
