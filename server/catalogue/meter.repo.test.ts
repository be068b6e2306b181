import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MeterRepo } from './meter.repo';
import { RequestMeter } from './meter';
import { StoragesRepo } from './storages.repo';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { StorageRef } from './storage-ref';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: MeterRepo;
before(async () => {
  t = await openTestDb();
  repo = new MeterRepo(asyncOnly(t.db)); // every statement on db.async
});
after(() => t?.close());

/** Storage `id` of tenant 1 (the tests before tenants' own). */
const t1 = (id: number): StorageRef => ({ id, ...DEFAULT_TENANT });
const T2: TenantScope = { tenant_id: 2 };

const counts = (list: number, head: number, get: number, put: number) => ({ list, head, get, put });

test('counts add to their day, also from two flushes at once (two instances); days read newest first', async () => {
  const id = await testStorage(t.db, 'Bucket');
  await repo.add([{ storage_id: id, ...DEFAULT_TENANT, day: '2026-12-01', ...counts(1, 2, 3, 4) }]);
  await Promise.all([
    repo.add([
      { storage_id: id, ...DEFAULT_TENANT, day: '2026-12-01', ...counts(10, 0, 0, 1) },
      { storage_id: id, ...DEFAULT_TENANT, day: '2026-12-02', ...counts(0, 0, 5, 0) },
    ]),
    repo.add([{ storage_id: id, ...DEFAULT_TENANT, day: '2026-12-01', ...counts(100, 0, 0, 0) }]),
  ]);
  assert.deepEqual(await repo.dayCounts(t1(id), '2026-12-01'), counts(111, 2, 3, 5));
  assert.equal(await repo.dayCounts(t1(id), '2026-12-03'), undefined);
  assert.deepEqual(await repo.days(t1(id), '2026-11-01', '2026-12-31'), [
    { day: '2026-12-02', ...counts(0, 0, 5, 0) },
    { day: '2026-12-01', ...counts(111, 2, 3, 5) },
  ]);
  assert.deepEqual(await repo.days(t1(id), '2026-12-02', '2026-12-02'), [{ day: '2026-12-02', ...counts(0, 0, 5, 0) }]);
});

test('a budget is stored, replaced and 0 without a row', async () => {
  const id = await testStorage(t.db, 'Budgeted');
  assert.equal(await repo.budget(t1(id)), 0);
  await repo.setBudget(t1(id), 500);
  await repo.setBudget(t1(id), 700);
  assert.equal(await repo.budget(t1(id)), 700);
});

test('requests counted while a flush is in flight are neither lost nor stored twice', async () => {
  const id = await testStorage(t.db, 'Busy');
  const storages = new StoragesRepo(t.db);
  await storages.load();
  const meter = new RequestMeter(asyncOnly(t.db), storages, () => ({}));
  const sink = meter.sink(storages.byId(DEFAULT_TENANT, id)!.uid, 's3')!;
  for (let i = 0; i < 5; i++) sink('get');
  const flushing = meter.flush();
  for (let i = 0; i < 3; i++) sink('get');
  await Promise.all([flushing, meter.flush()]);
  await meter.flush();
  const day = new Date().toISOString().slice(0, 10);
  assert.equal((await repo.dayCounts(t1(id), day))?.get, 8);
  assert.equal(await meter.usedToday(id), 8);
});

test('a meter new to the day adds the stored count once: requests counted before it is read are neither lost nor counted twice', async () => {
  const id = await testStorage(t.db, 'Restarted');
  const storages = new StoragesRepo(t.db);
  await storages.load();
  const day = new Date().toISOString().slice(0, 10);
  await repo.add([{ storage_id: id, ...DEFAULT_TENANT, day, ...counts(0, 0, 5, 0) }]); // what the run before stored
  const meter = new RequestMeter(asyncOnly(t.db), storages, () => ({}));
  const sink = meter.sink(storages.byId(DEFAULT_TENANT, id)!.uid, 's3')!;
  for (let i = 0; i < 3; i++) sink('get');
  await meter.flush(); // at once, while the stored count may still be read
  await meter.setBudget(id, 8);
  assert.equal(await meter.usedToday(id), 8);
  assert.match((await meter.blocked(id)) ?? '', /budget spent \(8 of 8/);
  await meter.flush();
  assert.equal((await repo.dayCounts(t1(id), day))?.get, 8);
  assert.equal((await repo.budgets([DEFAULT_TENANT])).get(id), 8);
});

test('tenants: the counts and budget of another tenant’s storage are neither read, added to, listed nor replaced', async () => {
  const a = t1(await testStorage(t.db, 'Metered'));
  const b: StorageRef = { id: await testStorage(t.db, 'Metered', T2), ...T2 };
  const day = '2026-12-05';
  await repo.add([{ storage_id: a.id, tenant_id: a.tenant_id, day, ...counts(1, 0, 0, 0) }]);
  await repo.add([{ storage_id: b.id, tenant_id: b.tenant_id, day, ...counts(0, 0, 7, 0) }]);
  await repo.setBudget(a, 100);
  await repo.setBudget(b, 200);
  assert.deepEqual(await repo.dayCounts(a, day), counts(1, 0, 0, 0));
  assert.deepEqual(await repo.dayCounts(b, day), counts(0, 0, 7, 0));
  assert.equal(await repo.dayCounts({ id: b.id, ...DEFAULT_TENANT }, day), undefined, "tenant 1 does not read tenant 2's day by its id");
  assert.deepEqual(await repo.days({ id: b.id, ...DEFAULT_TENANT }, '2026-01-01', '2026-12-31'), []);
  assert.equal(await repo.budget({ id: b.id, ...DEFAULT_TENANT }), 0, 'nor its budget');
  await repo.setBudget({ id: b.id, ...DEFAULT_TENANT }, 5);
  await repo.add([{ storage_id: b.id, ...DEFAULT_TENANT, day, ...counts(0, 0, 100, 0) }]);
  assert.deepEqual(await repo.dayCounts(b, day), counts(0, 0, 7, 0), 'nor added to');
  assert.equal((await repo.budgets([DEFAULT_TENANT])).has(b.id), false, 'budgets of tenant 1 only');
  assert.equal((await repo.budgets([DEFAULT_TENANT, T2])).get(b.id), 200, 'system work names both');
  assert.equal((await repo.budgets([])).size, 0);
  assert.equal(await repo.budget(b), 200);
  assert.equal(await repo.budget(a), 100);
});
