import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CronStateRepo } from './cron-state.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: CronStateRepo;
before(async () => {
  t = await openTestDb();
  repo = new CronStateRepo(t.db);
});
after(() => t?.close());

test('a schedule seen first is seeded once: racing instances all arm from the first value stored', async () => {
  const seen = await Promise.all(Array.from({ length: 8 }, (_, i) => repo.lastRun('nightly', `2026-12-05T00:00:0${i}.000Z`)));
  assert.equal(new Set(seen).size, 1, JSON.stringify(seen));
  assert.equal(await repo.lastRun('nightly', '2027-01-01T00:00:00.000Z'), seen[0], 'a known schedule is not seeded again');
});

test('of instances armed from one value exactly one claims the slot; a "run now" moves it regardless', async () => {
  const from = await repo.lastRun('tick', '2026-12-05T10:00:00.000Z');
  const won = await Promise.all(Array.from({ length: 6 }, (_, i) => repo.claim('tick', from, `2026-12-05T10:00:0${i + 1}.000Z`)));
  assert.equal(won.filter(Boolean).length, 1, JSON.stringify(won));
  assert.equal(await repo.claim('tick', from, '2026-12-05T10:01:00.000Z'), false, 'the slot is taken');
  await repo.record('tick', '2026-12-05T11:00:00.000Z');
  await repo.record('fresh', '2026-12-05T11:00:00.000Z');
  assert.equal(await repo.lastRun('tick', 'x'), '2026-12-05T11:00:00.000Z');
  assert.equal(await repo.lastRun('fresh', 'x'), '2026-12-05T11:00:00.000Z');
});
