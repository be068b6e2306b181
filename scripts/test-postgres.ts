/**
 * The PostgreSQL phase's one cluster (scripts/test.mjs starts this with `node --import tsx`): starts a
 * throwaway cluster, migrates a template database once, prints `{"url", "template"}` as one JSON line,
 * and stops and removes the cluster when its stdin closes (the runner ended, however it ended).
 * Test files copy the template per server (test/helpers/server.ts, createFromTemplate).
 */
import pg from 'pg';
import { startPostgres } from '../test/helpers/postgres';
import { migratePostgres } from '../server/db/pg/migrate';
import { MIGRATIONS } from '../server/db/migrations';

const TEMPLATE = 'filedock_template';
/** Three test files at once, each with a few servers of a pool each. */
const MAX_CONNECTIONS = 300;

const t0 = performance.now();
const cluster = await startPostgres({ maxConnections: MAX_CONNECTIONS });
const started = performance.now();
const c = new pg.Client({ connectionString: await cluster.createDatabase(TEMPLATE) });
await c.connect();
try {
  await migratePostgres(c, MIGRATIONS);
} finally {
  await c.end();
}
// A template nobody connects to (a connection would block every copy).
const admin = new pg.Client({ connectionString: cluster.url() });
await admin.connect();
await admin.query(`ALTER DATABASE ${TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
await admin.end();
const ms = (a: number, b: number) => Math.round(b - a);
process.stdout.write(`${JSON.stringify({ url: cluster.url(), template: TEMPLATE, start_ms: ms(t0, started), migrate_ms: ms(started, performance.now()) })}\n`);

const stop = async () => {
  await cluster.destroy();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
