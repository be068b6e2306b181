import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { PURGE_ORDER, TenantPurgeRepo, migrate } from '../db';
import { SCOPED } from '../db/tenant-tables';
import { MIGRATIONS } from '../db/migrations';
import { JobQueue } from '../jobs';
import { TenantPurge } from './tenant-purge';
import { TenantRecordsRepo } from './tenant-records.repo';

let t: TestDb;
let records: TenantRecordsRepo;
let repo: TenantPurgeRepo;
const LIVE = 2;
const GONE = 3;

before(async () => {
  t = await openTestDb();
  records = new TenantRecordsRepo(t.db);
  repo = new TenantPurgeRepo(t.db);
  for (const slug of ['live', 'gone']) await records.insert({ slug, name: slug, hostnames: [], quotas: {}, branding: {} });
  const now = new Date().toISOString();
  for (const id of [LIVE, GONE]) {
    for (let i = 0; i < 5; i++) await t.db.async.sql('INSERT INTO outbox (tenant_id, event, payload, created_at) VALUES (?, ?, ?, ?)', [id, 'x', '{}', now]);
    await t.db.async.sql('INSERT INTO audit (tenant_id, ts, action) VALUES (?, ?, ?)', [id, now, 'a']);
    await t.db.async.sql('INSERT INTO ops (tenant_id, id, kind, status, run_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      id,
      `op${id}`,
      'files.transfer',
      'completed',
      now,
      now,
      now,
    ]);
    // A WITHOUT ROWID child with a two-column key (SQLite deletes it by its key).
    for (const key of ['a', 'b', 'c'])
      await t.db.async.sql('INSERT INTO op_journal (tenant_id, op_id, key, value) VALUES (?, ?, ?, ?)', [id, `op${id}`, key, '1']);
  }
  await records.remove(GONE);
});
after(() => t?.close());

const counts = async (id: number) => {
  const out: Record<string, number> = {};
  for (const table of SCOPED) {
    const [r] = await t.db.async.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`, [id]);
    out[table] = Number(r.n);
  }
  return out;
};

test('the purge order names every scoped table once, each child before the parents its foreign keys name', () => {
  assert.deepEqual([...PURGE_ORDER].sort(), [...SCOPED].sort());
  const db = new Database(':memory:');
  migrate(db, MIGRATIONS);
  const scoped = new Set<string>(SCOPED);
  const late: string[] = [];
  for (const child of PURGE_ORDER) {
    const parents = db.prepare('SELECT DISTINCT "table" AS p FROM pragma_foreign_key_list(?)').all(child) as Array<{ p: string }>;
    for (const { p } of parents)
      if (scoped.has(p) && p !== child && PURGE_ORDER.indexOf(p as never) < PURGE_ORDER.indexOf(child)) late.push(`${child} after ${p}`);
  }
  db.close();
  assert.deepEqual(late, []);
});

test('the repository refuses tenant 1 and a live tenant', async () => {
  await assert.rejects(repo.batch({ tenant_id: 1 }, 'outbox', 10), /internal/);
  await assert.rejects(repo.batch({ tenant_id: LIVE }, 'outbox', 10), /internal/);
  assert.equal((await counts(LIVE)).outbox, 5, 'nothing of the live tenant went');
});

test('a purge stopped after one batch leaves its tombstone unpurged; the queue resumes it at start and it finishes', async () => {
  const liveBefore = await counts(LIVE);
  let batches = 0;
  const first = new TenantPurge({ repo, records, queue: new JobQueue(t.db), batch: 2 });
  // Two statements: `upload_parts` (empty) and the first batch of `op_journal` (the second table of the order).
  assert.equal(await first.run({ tenant_id: GONE }, () => batches++ >= 2), false, 'stopped');
  const mid = await counts(GONE);
  assert.equal(mid.op_journal, 1, 'one batch of two went from the first table holding rows');
  assert.equal(mid.outbox, 5);
  assert.deepEqual(await records.unpurged(), [GONE]);

  // "Restart": a new queue and purge service; the start queues the unfinished tombstone.
  const queue = new JobQueue(t.db, { pollMs: 20 });
  const purge = new TenantPurge({ repo, records, queue, batch: 2 });
  purge.register();
  assert.deepEqual(await purge.resume(), [GONE]);
  await queue.start({ alone: true });
  try {
    const until = Date.now() + 60_000;
    while ((await records.unpurged()).length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  } finally {
    await queue.stop();
  }
  assert.deepEqual(await records.unpurged(), [], 'marked purged');
  const left = Object.entries(await counts(GONE)).filter(([, n]) => n > 0);
  assert.deepEqual(left, [], 'no scoped table holds a row of the deleted tenant');
  assert.deepEqual(await counts(LIVE), liveBefore, 'the live tenant’s rows are untouched');
  assert.deepEqual(await purge.resume(), [], 'nothing is queued again at the next start');
});
