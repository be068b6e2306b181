import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT, openDatabase } from '../db';
import { JobQueue } from './queue';
import { Governor } from './governor';
import { processCpuSeconds } from '../lib/proc-cpu';
import { Scheduler } from './scheduler';
import { parseCron, nextRun } from './cron';
import { AppError } from '../errors';
import { busyError } from '../db';
import { tempDir } from '../../test/helpers/tools';

// The job kinds these tests invent, in the typed registry.
declare module './types' {
  interface JobPayloads {
    test: { n: string };
    nope: Record<string, never>;
    flaky: Record<string, never>;
    slow: Record<string, never>;
    steps: { steps: number };
    backlog: Record<string, never>;
    other: Record<string, never>;
    away: Record<string, never>;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('priority order, dedup, progress and completion', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { concurrency: 1, pollMs: 20 });
  const seen: string[] = [];
  q.register('test', async (ctx) => {
    seen.push(ctx.payload.n);
    ctx.progress(1, { done: 10, total: 10 });
    return { echoed: ctx.payload.n };
  });
  const low = await q.enqueue('test', { n: 'low' }, { tenant: DEFAULT_TENANT, priority: -1 });
  await q.enqueue('test', { n: 'high' }, { tenant: DEFAULT_TENANT, priority: 5 });
  const d1 = await q.enqueue('test', { n: 'dup' }, { tenant: DEFAULT_TENANT, dedupKey: 'k' });
  const d2 = await q.enqueue('test', { n: 'dup2' }, { tenant: DEFAULT_TENANT, dedupKey: 'k' });
  assert.equal(d1, d2, 'dedup returns the live op');
  await q.start();
  await q.idle();
  assert.deepEqual(seen, ['high', 'dup', 'low']);
  const op = (await q.get(DEFAULT_TENANT, low))!;
  assert.equal(op.status, 'completed');
  assert.deepEqual(op.result, { echoed: 'low' });
  assert.equal(op.bytes_total, 10);
  await assert.rejects(q.enqueue('nope', {}, { tenant: DEFAULT_TENANT }), /no handler/);
  await q.stop();
  await db.close();
  cleanup();
});

test('retries with backoff, then fails with the error code', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { pollMs: 10 });
  let calls = 0;
  q.register(
    'flaky',
    async () => {
      calls++;
      throw new AppError('storage_unreachable', { reason: 'down' });
    },
    { maxAttempts: 3, backoffMs: 10 },
  );
  const id = await q.enqueue('flaky', {}, { tenant: DEFAULT_TENANT });
  await q.start();
  await q.idle(5000);
  const op = (await q.get(DEFAULT_TENANT, id))!;
  assert.equal(calls, 3);
  assert.equal(op.status, 'failed');
  assert.equal(op.error_code, 'storage_unreachable');
  assert.deepEqual(op.error_params, { reason: 'down' });
  await q.stop();
  await db.close();
  cleanup();
});

test('an op cut short by an unavailable database runs again without spending an attempt', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { pollMs: 10 });
  let calls = 0;
  q.register(
    'away',
    async () => {
      if (++calls <= 2) throw busyError();
      return { ok: true };
    },
    { maxAttempts: 1, backoffMs: 10 },
  );
  const id = await q.enqueue('away', {}, { tenant: DEFAULT_TENANT });
  await q.start();
  const deadline = Date.now() + 15_000;
  while (!['completed', 'failed'].includes((await q.get(DEFAULT_TENANT, id))!.status) && Date.now() < deadline) await sleep(50);
  const op = (await q.get(DEFAULT_TENANT, id))!;
  assert.equal(op.status, 'completed', JSON.stringify(op));
  assert.equal(calls, 3, 'run again twice, though it had one attempt');
  assert.equal(op.attempts, 1);
  await q.stop();
  await db.close();
  cleanup();
});

test('an op claimed just before the database went away (its start failed) goes back and runs once it answers', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  // The statement that starts a claimed op (its row's read) fails once, as when the database stops answering.
  const prepare = db.sqlite.prepare.bind(db.sqlite);
  let failures = 1;
  db.sqlite.prepare = ((sql: string) => {
    const st = prepare(sql);
    if (sql !== 'SELECT * FROM ops WHERE tenant_id = ? AND id = ?') return st;
    const all = st.all.bind(st);
    return Object.assign(st, {
      all: (...a: unknown[]) =>
        failures-- > 0
          ? (() => {
              throw busyError();
            })()
          : all(...a),
    });
  }) as typeof db.sqlite.prepare;
  const q = new JobQueue(db, { pollMs: 10 });
  let calls = 0;
  q.register('away', async () => ({ n: ++calls }), { maxAttempts: 1 });
  const id = await q.enqueue('away', {}, { tenant: DEFAULT_TENANT });
  await q.start();
  const status = prepare('SELECT status FROM ops WHERE id = ?').pluck();
  const deadline = Date.now() + 10_000;
  while (status.get(id) !== 'completed' && Date.now() < deadline) await sleep(20);
  assert.ok(failures < 0, 'the start failed once');
  const op = (await q.get(DEFAULT_TENANT, id))!;
  assert.equal(op.status, 'completed', JSON.stringify(op));
  assert.equal(calls, 1);
  assert.equal(op.attempts, 1, 'the failed start spent no attempt');
  await q.stop();
  await db.close();
  cleanup();
});

test('cancel: queued at once, running through the AbortSignal', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { pollMs: 10, concurrency: 1 });
  q.register('slow', (ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))));
  const running = await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT });
  const waiting = await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT, runAt: new Date(Date.now() + 60_000) });
  await q.start();
  while ((await q.get(DEFAULT_TENANT, running))!.status !== 'running') await sleep(5);
  await q.cancel(DEFAULT_TENANT, waiting);
  await q.cancel(DEFAULT_TENANT, running);
  while ((await q.get(DEFAULT_TENANT, running))!.status === 'running') await sleep(5);
  assert.equal((await q.get(DEFAULT_TENANT, running))!.status, 'cancelled');
  assert.equal((await q.get(DEFAULT_TENANT, waiting))!.status, 'cancelled');
  await q.stop();
  await db.close();
  cleanup();
});

test('behindRunning: a queued op absorbs the request, a running one does not (the next waits behind it, once)', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { pollMs: 10, concurrency: 1 });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  q.register('slow', () => gate);
  const first = await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT, dedupKey: 'k', behindRunning: true });
  assert.equal(await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT, dedupKey: 'k', behindRunning: true }), first, 'queued: absorbed');
  await q.start();
  while ((await q.get(DEFAULT_TENANT, first))!.status !== 'running') await sleep(5);
  assert.equal(await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT, dedupKey: 'k' }), first, 'without the option a running op still absorbs');
  const next = await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT, dedupKey: 'k', behindRunning: true });
  assert.notEqual(next, first, 'running: a new op waits behind it');
  assert.equal(await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT, dedupKey: 'k', behindRunning: true }), next, 'and absorbs the ones after it');
  release();
  await q.idle(5000);
  assert.equal((await q.get(DEFAULT_TENANT, next))!.status, 'completed');
  await q.stop();
  await db.close();
  cleanup();
});

test('a backlog of one kind at its own limit does not hide other kinds', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { concurrency: 4, pollMs: 5_000 });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  q.register('backlog', () => gate, { concurrency: 1 });
  let otherRan = 0;
  q.register('other', async () => {
    otherRan = Date.now();
  });
  for (let i = 0; i < 120; i++) await q.enqueue('backlog', {}, { tenant: DEFAULT_TENANT });
  await q.start();
  await sleep(50);
  const t0 = Date.now();
  await q.enqueue('other', {}, { tenant: DEFAULT_TENANT, priority: -1 }); // behind 119 waiting rows of higher priority order
  for (let i = 0; i < 100 && !otherRan; i++) await sleep(10);
  assert.ok(otherRan, 'the other kind ran while the backlog waited');
  assert.ok(otherRan - t0 < 1_000, `ran after ${otherRan - t0} ms`);
  const waiting = (db.sqlite.prepare("SELECT count(*) AS n FROM ops WHERE status = 'queued'").get() as { n: number }).n;
  assert.equal(waiting, 119, 'the backlog keeps to its one slot');
  release();
  await q.idle(30_000);
  await q.stop();
  await db.close();
  cleanup();
});

test('an op interrupted by a restart resumes on the next boot', async () => {
  const { dir, cleanup } = tempDir();
  const file = `${dir}/db.sqlite`;
  let db = openDatabase(file);
  let q = new JobQueue(db, { pollMs: 10 });
  const runs: number[] = [];
  q.register('steps', async (ctx) => {
    runs.push(ctx.attempt);
    for (let i = 0; i < ctx.payload.steps; i++) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      await sleep(10);
      ctx.progress((i + 1) / ctx.payload.steps);
    }
    return 'done';
  });
  const id = await q.enqueue('steps', { steps: 100 }, { tenant: DEFAULT_TENANT });
  await q.start();
  while ((await q.get(DEFAULT_TENANT, id))!.status !== 'running') await sleep(5);
  await sleep(50);
  await q.stop(0); // "crash": the worker is aborted mid-run
  assert.equal((await q.get(DEFAULT_TENANT, id))!.status, 'queued');
  await db.close();

  // Simulate a hard crash too: a row left `running` with no process behind it.
  db = openDatabase(file);
  db.sqlite.prepare("UPDATE ops SET status = 'running' WHERE id = ?").run(id);
  q = new JobQueue(db, { pollMs: 10 });
  q.register('steps', async (ctx) => {
    runs.push(ctx.attempt);
    return 'resumed';
  });
  await q.start();
  await q.idle();
  assert.equal((await q.get(DEFAULT_TENANT, id))!.status, 'completed');
  assert.equal((await q.get(DEFAULT_TENANT, id))!.result, 'resumed');
  assert.equal(runs.length, 2);
  await q.stop();
  await db.close();
  cleanup();
});

test('cron expressions and scheduler persistence', async () => {
  const spec = parseCron('30 3 * * 1-5');
  const n = nextRun(spec, new Date('2026-11-21T10:00:00')); // a Saturday
  assert.equal(n.getDay(), 1);
  assert.equal(n.getHours(), 3);
  assert.equal(n.getMinutes(), 30);
  assert.throws(() => parseCron('61 * * * *'));
  assert.throws(() => parseCron('0 9 * * *', 'Mars/Olympus'), /Mars\/Olympus/);
  // The full syntax replication report schedules use: names, last day of month, nth weekday, nicknames, seconds.
  const from = new Date('2026-11-21T10:00:00Z');
  assert.equal(nextRun(parseCron('0 9 * * MON', 'UTC'), from).toISOString(), '2026-11-23T09:00:00.000Z');
  assert.equal(nextRun(parseCron('0 18 L * *', 'UTC'), from).toISOString(), '2026-11-30T18:00:00.000Z');
  assert.equal(nextRun(parseCron('0 8 * * 1#1', 'UTC'), from).toISOString(), '2026-12-07T08:00:00.000Z');
  assert.equal(nextRun(parseCron('@daily', 'UTC'), from).toISOString(), '2026-11-22T00:00:00.000Z');
  assert.equal(nextRun(parseCron('30 0 10 * * *', 'UTC'), from).toISOString(), '2026-11-21T10:00:30.000Z');
  // Time zones: 09:00 in Istanbul (UTC+3) and in New York (UTC-5 in November).
  assert.equal(nextRun(parseCron('0 9 * * *', 'Europe/Istanbul'), from).toISOString(), '2026-11-22T06:00:00.000Z');
  assert.equal(nextRun(parseCron('0 9 * * *', 'America/New_York'), from).toISOString(), '2026-11-21T14:00:00.000Z');
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const s = new Scheduler(db);
  let fired = 0;
  s.every('tick', 50, () => {
    fired++;
  });
  await s.runNow('tick');
  assert.equal(fired, 1);
  const row = db.sqlite.prepare("SELECT last_run_at FROM cron_state WHERE name = 'tick'").get() as { last_run_at: string };
  assert.ok(Date.now() - Date.parse(row.last_run_at) < 5000);
  await s.stop();
  await db.close();
  cleanup();
});

test('governed kinds: one lane on battery across kinds, nothing starts asleep, every op runs once after the wake', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const governor = new Governor({ budgetPercent: 0, powerOverride: 'battery', cpuSeconds: processCpuSeconds });
  const q = new JobQueue(db, { concurrency: 4, pollMs: 20, governor });
  let running = 0;
  let peak = 0;
  const runs = new Map<string, number>();
  const work = async (ctx: { payload: { n: string } }) => {
    runs.set(ctx.payload.n, (runs.get(ctx.payload.n) ?? 0) + 1);
    peak = Math.max(peak, ++running);
    await sleep(15);
    running--;
  };
  q.register('test', work, { concurrency: 4, governed: 'lane' });
  q.register('other', async () => undefined);
  q.register('backlog', (ctx) => work({ payload: { n: `b${ctx.id}` } }), { concurrency: 4, governed: 'lane' });
  for (let i = 0; i < 20; i++) await q.enqueue('test', { n: `t${i}` }, { tenant: DEFAULT_TENANT });
  for (let i = 0; i < 10; i++) await q.enqueue('backlog', {}, { tenant: DEFAULT_TENANT });
  await q.start();
  while (runs.size < 5) await sleep(5);
  governor.hostMessage({ type: 'sleep' });
  const ungoverned = await q.enqueue('other', {}, { tenant: DEFAULT_TENANT });
  await sleep(100);
  const asleep = runs.size;
  await sleep(200);
  assert.equal(runs.size, asleep, 'no governed op starts while asleep');
  assert.equal((await q.get(DEFAULT_TENANT, ungoverned))!.status, 'completed', 'work outside the governor is not held');
  governor.hostMessage({ type: 'wake' });
  await q.idle(10_000, 0);
  assert.equal(runs.size, 30);
  assert.ok(
    [...runs.values()].every((n) => n === 1),
    'each op ran once',
  );
  assert.equal(peak, 1, 'one lane on battery, across both kinds');
  await q.stop();
  db.close();
  cleanup();
});

test('an io kind runs while the CPU budget holds lane kinds back; those start once the budget allows', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  let cpu = 0; // a meter the test drives: ten CPU seconds spent at once overdraw a one-core budget
  const governor = new Governor({ budgetPercent: 100, cpuSeconds: () => cpu });
  const q = new JobQueue(db, { concurrency: 4, pollMs: 20, governor });
  q.register('test', async () => undefined, { concurrency: 2, governed: 'io' });
  q.register('backlog', async () => undefined, { governed: 'lane' });
  await q.start();
  await sleep(30);
  cpu += 10;
  governor.sample();
  assert.equal(governor.status().over_budget, true);
  const held = await q.enqueue('backlog', {}, { tenant: DEFAULT_TENANT });
  const copies = await Promise.all(Array.from({ length: 10 }, (_, i) => q.enqueue('test', { n: `c${i}` }, { tenant: DEFAULT_TENANT })));
  const t0 = Date.now();
  const all = async () => (await Promise.all(copies.map((id) => q.get(DEFAULT_TENANT, id)))).every((op) => op!.status === 'completed');
  while (!(await all()) && Date.now() - t0 < 3000) await sleep(5);
  assert.ok(await all(), 'every io op ran over budget');
  assert.equal((await q.get(DEFAULT_TENANT, held))!.status, 'queued', 'the lane op waits for the budget');
  governor.setBudget(0);
  await q.idle(5000, 0);
  assert.equal((await q.get(DEFAULT_TENANT, held))!.status, 'completed');
  await q.stop();
  db.close();
  cleanup();
});

test('a governed op waits in the same line as the lanes a handler takes itself: a long backfill cannot starve it', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const governor = new Governor({ budgetPercent: 0, powerOverride: 'battery', cpuSeconds: processCpuSeconds });
  const q = new JobQueue(db, { concurrency: 4, pollMs: 20, governor });
  q.register('test', async () => undefined, { governed: 'lane' });
  await q.start();
  // Two backfill workers on one lane: one of them always waits, so the line is never empty.
  let backfilling = true;
  let units = 0;
  const worker = async () => {
    while (backfilling) {
      const release = await governor.acquire();
      await sleep(5);
      units++;
      release();
    }
  };
  const workers = [worker(), worker()];
  await sleep(50);
  const t0 = Date.now();
  const id = await q.enqueue('test', { n: 'scan' }, { tenant: DEFAULT_TENANT });
  while ((await q.get(DEFAULT_TENANT, id))!.status !== 'completed' && Date.now() - t0 < 3000) await sleep(5);
  const waited = Date.now() - t0;
  const before = units;
  backfilling = false;
  await Promise.all(workers);
  assert.equal((await q.get(DEFAULT_TENANT, id))!.status, 'completed', 'the op got its turn while the backfill ran');
  assert.ok(waited < 1000, `it waited ${waited} ms`);
  assert.ok(before > 5, 'the backfill kept running meanwhile');
  await q.stop();
  db.close();
  cleanup();
});

test('depth: queued and running ops per kind and state, none once they finished', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { pollMs: 10, concurrency: 1 });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  q.register('slow', () => held);
  q.register('other', async () => {});
  assert.deepEqual(await q.depth(), []);
  await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT });
  await q.enqueue('slow', {}, { tenant: DEFAULT_TENANT });
  await q.enqueue('other', {}, { tenant: DEFAULT_TENANT, runAt: new Date(Date.now() + 60_000) });
  const sorted = async () => (await q.depth()).map((r) => `${r.kind} ${r.status} ${r.n}`).sort();
  assert.deepEqual(await sorted(), ['other queued 1', 'slow queued 2']);
  await q.start();
  for (let i = 0; i < 500 && !(await sorted()).includes('slow running 1'); i++) await sleep(10);
  assert.deepEqual(await sorted(), ['other queued 1', 'slow queued 1', 'slow running 1']);
  release();
  for (let i = 0; i < 500 && (await sorted()).length > 1; i++) await sleep(10);
  assert.deepEqual(await sorted(), ['other queued 1'], 'finished ops are not counted');
  await q.stop();
  db.close();
  cleanup();
});
