/**
 * Once per schedule across instances: two schedulers on one database (two
 * handles on one SQLite file; two connections to one PostgreSQL database),
 * each with the same every-second cron, run each second's slot once between
 * them, and a fresh instance arms from the recorded last run.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, openPostgresDatabase, type Db } from '../db';
import { Scheduler } from './scheduler';
import { tempDir } from '../../test/helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Both instances schedule `tick` every second for ~3.5 s; returns the slots (whole seconds) each run fired in. */
async function twoSchedulers(dbs: Db[]): Promise<Array<{ who: number; second: number }>> {
  const runs: Array<{ who: number; second: number }> = [];
  const schedulers = dbs.map((db, who) => {
    const s = new Scheduler(db);
    s.cron('tick', '* * * * * *', () => void runs.push({ who, second: Math.floor(Date.now() / 1000) }));
    return s;
  });
  await sleep(3500);
  await Promise.all(schedulers.map((s) => s.stop()));
  return runs;
}

function assertOncePerSlot(runs: Array<{ who: number; second: number }>) {
  assert.ok(runs.length >= 2, `the schedule ran (${runs.length} runs)`);
  const seconds = runs.map((r) => r.second);
  assert.deepEqual(seconds, [...new Set(seconds)], `one run per slot between the two instances: ${JSON.stringify(runs)}`);
}

test('SQLite: two schedulers on one database file run each slot once', async () => {
  const { dir, cleanup } = tempDir();
  const a = openDatabase(`${dir}/db.sqlite`);
  const b = openDatabase(`${dir}/db.sqlite`);
  try {
    assertOncePerSlot(await twoSchedulers([a, b]));
  } finally {
    await a.close();
    await b.close();
    cleanup();
  }
});

test('a schedule seen first is seeded, "run now" always runs and records', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const s = new Scheduler(db);
  let n = 0;
  s.every('hourly', 3_600_000, () => void n++);
  // Arming reads (and seeds) the last run asynchronously.
  let seeded: { last_run_at: string } | undefined;
  for (let i = 0; i < 200 && !seeded; i++) {
    await sleep(10);
    seeded = db.sqlite.prepare("SELECT last_run_at FROM cron_state WHERE name = 'hourly'").get() as { last_run_at: string } | undefined;
  }
  assert.ok(seeded, 'the schedule was seeded');
  assert.ok(Math.abs(Date.parse(seeded.last_run_at) - Date.now()) < 5000, 'seeded with now: the first run is an hour away, as before');
  await s.runNow('hourly');
  assert.equal(n, 1);
  const after = db.sqlite.prepare("SELECT last_run_at FROM cron_state WHERE name = 'hourly'").get() as { last_run_at: string };
  assert.ok(after.last_run_at >= seeded.last_run_at);
  await s.stop();
  await db.close();
  cleanup();
});

const skip = needPostgres();
describe('scheduler on PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startPostgres();
  });
  after(async () => {
    await cluster?.destroy();
  });

  test('two instances run each slot once', async () => {
    const url = await cluster.createDatabase('cron');
    const dbs = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
    try {
      assertOncePerSlot(await twoSchedulers(dbs));
    } finally {
      for (const db of dbs) await db.close();
    }
  });
});
