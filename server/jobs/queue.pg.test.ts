/**
 * The op queue with several instances on one PostgreSQL database (leases,
 * docs/operations.md "Several instances"): two queues pumping the same 1,000
 * ops run each exactly once; a running op whose instance is alive keeps its
 * lease (a starting instance does not steal it); once that instance is killed
 * its op is taken over after the lease and resumes from its journal; an op
 * claimed for an instance that never started it is given back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TENANT, openPostgresDatabase } from '../db';
import { JobQueue } from './queue';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';
import { sqlRow, sqlRows } from '../../test/helpers/sql';

declare module './types' {
  interface JobPayloads {
    'pg.count': { i: number };
    'pg.hang': { label: string };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Another instance's queue in its own process (test/helpers/queue-child.ts); `line` waits for its output to match. */
function spawnChild(url: string, leaseMs: number) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('../../test/helpers/queue-child.ts', import.meta.url)), url, String(leaseMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const line = (re: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (m) {
          child.stdout!.off('data', check);
          child.off('exit', exited);
          resolve(m);
        }
      };
      const exited = (code: number | null) => reject(new Error(`the other instance exited (${code}) before printing ${re}`));
      child.stdout!.on('data', check);
      child.once('exit', exited);
      check();
    });
  return { child, line };
}
const skip = needPostgres();

describe('op queue: several instances on one PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startPostgres();
  });
  after(async () => {
    await cluster?.destroy();
  });

  test('two instances (two processes) pumping 1,000 ops run each exactly once', { timeout: 240_000 }, async () => {
    const url = await cluster.createDatabase('pump');
    const db = await openPostgresDatabase(url);
    await sqlRows(db, 'CREATE TABLE pg_runs (op_id text NOT NULL, instance text NOT NULL)');
    // Instance B in its own process, as a second instance runs: its own pool, its own event loop.
    const other = spawnChild(url, 60_000);
    try {
      await other.line(/ready (\S+)\n/);
      const q = new JobQueue(db, { concurrency: 4, pollMs: 20 });
      q.register(
        'pg.count',
        async (ctx) => {
          await sqlRows(db, 'INSERT INTO pg_runs (op_id, instance) VALUES (?, ?)', ctx.id, q.instanceId);
          await sleep(ctx.payload.i % 3);
          return q.instanceId;
        },
        { concurrency: 4 },
      );
      await q.start();
      for (let i = 0; i < 1000; i++) await q.enqueue('pg.count', { i }, { tenant: DEFAULT_TENANT });
      const end = Date.now() + 200_000;
      const count = async (status: string) => Number(((await sqlRow(db, 'SELECT count(*) AS n FROM ops WHERE status = ?', status)) as { n: number }).n);
      while ((await count('completed')) < 1000 && Date.now() < end) await sleep(100);
      await q.stop();

      assert.equal(await count('completed'), 1000, 'every op completed');
      const twice = await sqlRows(db, 'SELECT op_id, count(*) AS n FROM pg_runs GROUP BY op_id HAVING count(*) > 1');
      assert.deepEqual(twice, [], 'no op ran twice');
      assert.equal(Number(((await sqlRow(db, 'SELECT count(DISTINCT op_id) AS n FROM pg_runs')) as { n: number }).n), 1000);
      const per = (await sqlRows(db, 'SELECT instance, count(*) AS n FROM pg_runs GROUP BY instance')) as Array<{ instance: string; n: number }>;
      assert.equal(per.length, 2, `both instances ran ops: ${JSON.stringify(per)}`);
      // The row says who ran it, and the result (the handler's instance) agrees with the lease owner.
      const rows = (await sqlRows(db, 'SELECT lease_owner, result, attempts FROM ops')) as Array<{ lease_owner: string; result: string; attempts: number }>;
      assert.ok(
        rows.every((r) => JSON.parse(r.result) === r.lease_owner && Number(r.attempts) === 1),
        'one attempt each, recorded by the instance that ran it',
      );
    } finally {
      other.child.kill('SIGKILL');
      await db.close();
    }
  });

  test('a live instance keeps its op; a killed one loses it after the lease and the op resumes elsewhere', { timeout: 120_000 }, async () => {
    const url = await cluster.createDatabase('takeover');
    const LEASE = 1500;
    const db = await openPostgresDatabase(url);
    const other = spawnChild(url, LEASE);
    const child = other.child;
    try {
      await other.line(/ready (\S+)\n/);
      // Enqueued once the child's queue is up: it is the only instance, so it claims the op.
      const q0 = new JobQueue(db);
      q0.register('pg.hang', async () => {});
      await q0.enqueue('pg.hang', { label: 'copy' }, { tenant: DEFAULT_TENANT });
      const m = await other.line(/running (\S+) (\S+)\n/);
      const started = { id: m[1], instance: m[2] };

      // A second instance starts while the first is alive and renewing: the op stays the first's.
      const resumed: Array<{ attempt: number; journaled: string | undefined; at: number }> = [];
      const q = new JobQueue(db, { pollMs: 20, leaseMs: LEASE });
      q.register('pg.hang', async (ctx) => {
        resumed.push({ attempt: ctx.attempt, journaled: await ctx.journal.get('step-1'), at: Date.now() });
        return 'finished by the second instance';
      });
      await q.start();
      assert.notEqual(q.instanceId, started.instance);
      await sleep(LEASE * 2);
      const live = (await sqlRow(db, 'SELECT status, lease_owner, lease_until FROM ops WHERE id = ?', started.id)) as {
        status: string;
        lease_owner: string;
        lease_until: string;
      };
      assert.equal(live.status, 'running');
      assert.equal(live.lease_owner, started.instance, 'the live instance kept its op across two lease lengths (renewed)');
      assert.ok(Date.parse(live.lease_until) > Date.now(), 'its lease is in the future');
      assert.equal(resumed.length, 0, 'nothing was stolen');

      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const leaseEnd = Date.parse(((await sqlRow(db, 'SELECT lease_until FROM ops WHERE id = ?', started.id)) as { lease_until: string }).lease_until);
      const deadline = Date.now() + LEASE * 4;
      while (resumed.length === 0 && Date.now() < deadline) await sleep(50);
      assert.equal(resumed.length, 1, 'the op was taken over');
      assert.ok(resumed[0].at >= leaseEnd, "not before the killed instance's lease passed");
      assert.equal(resumed[0].journaled, 'done by the first instance', "the resumed attempt sees the first one's journal");
      assert.equal(resumed[0].attempt, 2);
      while ((await q.get(DEFAULT_TENANT, started.id))!.status === 'running') await sleep(20);
      const done = (await sqlRow(db, 'SELECT status, lease_owner, result FROM ops WHERE id = ?', started.id)) as {
        status: string;
        lease_owner: string;
        result: string;
      };
      assert.deepEqual(done, { status: 'completed', lease_owner: q.instanceId, result: JSON.stringify('finished by the second instance') });
      await q.stop();
    } finally {
      child.kill('SIGKILL');
      await db.close();
    }
  });

  test('an op whose claim committed while its answer was lost (a hung database) is given back, not renewed forever', { timeout: 60_000 }, async () => {
    const url = await cluster.createDatabase('orphan');
    const LEASE = 900;
    const db = await openPostgresDatabase(url);
    const q = new JobQueue(db, { pollMs: 20, leaseMs: LEASE });
    try {
      const ran: number[] = [];
      q.register('pg.hang', async (ctx) => void ran.push(ctx.attempt));
      const id = await q.enqueue('pg.hang', { label: 'orphan' }, { tenant: DEFAULT_TENANT });
      // The claim as the database committed it: running under this instance's lease, which the queue never heard of.
      await sqlRows(
        db,
        "UPDATE ops SET status = 'running', lease_owner = ?, lease_until = ?, attempts = 1 WHERE id = ?",
        q.instanceId,
        new Date(Date.now() + 60_000).toISOString(),
        id,
      );
      await q.start();
      const deadline = Date.now() + LEASE * 10;
      while ((await q.get(DEFAULT_TENANT, id))!.status !== 'completed' && Date.now() < deadline) await sleep(50);
      const op = (await q.get(DEFAULT_TENANT, id))!;
      assert.equal(op.status, 'completed', JSON.stringify(op));
      assert.deepEqual(ran, [1], 'run once, its lost claim not counted as an attempt');
    } finally {
      await q.stop();
      await db.close();
    }
  });
});
