import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MeterRepo } from './meter.repo';
import { RequestMeter } from './meter';
import { StoragesRepo } from './storages.repo';
import { DEFAULT_TENANT } from '../db';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: MeterRepo;
before(async () => {
  t = await openTestDb();
  repo = new MeterRepo(asyncOnly(t.db)); // every statement on db.async
});
after(() => t?.close());

const counts = (list: number, head: number, get: number, put: number) => ({ list, head, get, put });

test('counts add to their day, also from two flushes at once (two instances); days read newest first', async () => {
  const id = await testStorage(t.db, 'Bucket');
  await repo.add([{ storage_id: id, day: '2026-12-01', ...counts(1, 2, 3, 4) }]);
  await Promise.all([
    repo.add([
      { storage_id: id, day: '2026-12-01', ...counts(10, 0, 0, 1) },
      { storage_id: id, day: '2026-12-02', ...counts(0, 0, 5, 0) },
    ]),
    repo.add([{ storage_id: id, day: '2026-12-01', ...counts(100, 0, 0, 0) }]),
  ]);
  assert.deepEqual(await repo.dayCounts(id, '2026-12-01'), counts(111, 2, 3, 5));
  assert.equal(await repo.dayCounts(id, '2026-12-03'), undefined);
  assert.deepEqual(await repo.days(id, '2026-11-01', '2026-12-31'), [
    { day: '2026-12-02', ...counts(0, 0, 5, 0) },
    { day: '2026-12-01', ...counts(111, 2, 3, 5) },
  ]);
  assert.deepEqual(await repo.days(id, '2026-12-02', '2026-12-02'), [{ day: '2026-12-02', ...counts(0, 0, 5, 0) }]);
});

test('a budget is stored, replaced and 0 without a row', async () => {
  const id = await testStorage(t.db, 'Budgeted');
  assert.equal(await repo.budget(id), 0);
  await repo.setBudget(id, 500);
  await repo.setBudget(id, 700);
  assert.equal(await repo.budget(id), 700);
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
  assert.equal((await repo.dayCounts(id, day))?.get, 8);
  assert.equal(await meter.usedToday(id), 8);
});

test('a meter new to the day adds the stored count once: requests counted before it is read are neither lost nor counted twice', async () => {
  const id = await testStorage(t.db, 'Restarted');
  const storages = new StoragesRepo(t.db);
  await storages.load();
  const day = new Date().toISOString().slice(0, 10);
  await repo.add([{ storage_id: id, day, ...counts(0, 0, 5, 0) }]); // what the run before stored
  const meter = new RequestMeter(asyncOnly(t.db), storages, () => ({}));
  const sink = meter.sink(storages.byId(DEFAULT_TENANT, id)!.uid, 's3')!;
  for (let i = 0; i < 3; i++) sink('get');
  await meter.flush(); // at once, while the stored count may still be read
  await meter.setBudget(id, 8);
  assert.equal(await meter.usedToday(id), 8);
  assert.match((await meter.blocked(id)) ?? '', /budget spent \(8 of 8/);
  await meter.flush();
  assert.equal((await repo.dayCounts(id, day))?.get, 8);
  assert.equal((await repo.budgets()).get(id), 8);
});
