import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MeterRepo } from './meter.repo';
import { RequestMeter } from './meter';
import { StoragesRepo } from './storages.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: MeterRepo;
before(async () => {
  t = await openTestDb();
  repo = new MeterRepo(t.db);
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
  assert.deepEqual(repo.dayCounts(id, '2026-12-01'), counts(111, 2, 3, 5));
  assert.equal(repo.dayCounts(id, '2026-12-03'), undefined);
  assert.deepEqual(await repo.days(id, '2026-11-01', '2026-12-31'), [
    { day: '2026-12-02', ...counts(0, 0, 5, 0) },
    { day: '2026-12-01', ...counts(111, 2, 3, 5) },
  ]);
  assert.deepEqual(await repo.days(id, '2026-12-02', '2026-12-02'), [{ day: '2026-12-02', ...counts(0, 0, 5, 0) }]);
});

test('a budget is stored, replaced and 0 without a row', async () => {
  const id = await testStorage(t.db, 'Budgeted');
  assert.equal(repo.budget(id), 0);
  await repo.setBudget(id, 500);
  await repo.setBudget(id, 700);
  assert.equal(repo.budget(id), 700);
});

test('requests counted while a flush is in flight are neither lost nor stored twice', async () => {
  const id = await testStorage(t.db, 'Busy');
  const storages = new StoragesRepo(t.db);
  await storages.load();
  const meter = new RequestMeter(t.db, storages, () => ({}));
  const sink = meter.sink(storages.byId(id)!.uid, 's3')!;
  for (let i = 0; i < 5; i++) sink('get');
  const flushing = meter.flush();
  for (let i = 0; i < 3; i++) sink('get');
  await Promise.all([flushing, meter.flush()]);
  await meter.flush();
  const day = new Date().toISOString().slice(0, 10);
  assert.equal(repo.dayCounts(id, day)?.get, 8);
  assert.equal(meter.usedToday(id), 8);
});
