/**
 * Another instance's op queue in its own process, for the lease tests
 * (server/jobs/queue.pg.test.ts). Opens the PostgreSQL database at argv[2]
 * with the lease length argv[3] and runs:
 * - `pg.hang` ops: journal one step, print `running <op id> <instance id>`,
 *   then never finish (the test SIGKILLs the process: a killed instance stops
 *   renewing its leases);
 * - `pg.count` ops: insert a row (op id, instance id) into `pg_runs`.
 */
import { openPostgresDatabase } from '../../server/db';
import { JobQueue } from '../../server/jobs';
import { sqlRows } from './sql';

declare module '../../server/jobs/types' {
  interface JobPayloads {
    'pg.hang': { label: string };
    'pg.count': { i: number };
  }
}

const db = await openPostgresDatabase(process.argv[2]);
const q = new JobQueue(db, { pollMs: 20, concurrency: 4, leaseMs: Number(process.argv[3] ?? 1500) });
q.register('pg.hang', async (ctx) => {
  await ctx.journal.put('step-1', 'done by the first instance');
  process.stdout.write(`running ${ctx.id} ${q.instanceId}\n`);
  await new Promise(() => {}); // never ends: only the kill stops it
});
q.register(
  'pg.count',
  async (ctx) => {
    await sqlRows(db, 'INSERT INTO pg_runs (op_id, instance) VALUES (?, ?)', ctx.id, q.instanceId);
    await new Promise((r) => setTimeout(r, ctx.payload.i % 3));
    return q.instanceId;
  },
  { concurrency: 4 },
);
await q.start();
process.stdout.write(`ready ${q.instanceId}\n`);
// The queue's timers are unref'd (they never hold a server open): this one keeps the process alive until the kill.
setInterval(() => {}, 1000);
process.on(
  'SIGTERM',
  () =>
    void q
      .stop()
      .then(() => db.close())
      .then(() => process.exit(0)),
);
