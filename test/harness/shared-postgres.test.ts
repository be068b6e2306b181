/**
 * The PostgreSQL phase's one cluster (scripts/test-postgres.ts): a migrated
 * template, copied per test server (test/helpers/server.ts) instead of a
 * cluster and a migration per test file; the cluster is stopped and removed
 * when the runner closes the script's stdin.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { needPostgres } from '../helpers/postgres';
import { startTestServer } from '../helpers/server';

const skip = needPostgres();
const script = new URL('../../scripts/test-postgres.ts', import.meta.url).pathname;

test('test servers get copies of the run’s migrated template; the cluster goes when the runner does', {
  skip: skip ?? undefined,
  timeout: 240_000,
}, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const saved = { ...process.env };
  try {
    const info = await new Promise<{ url: string; template: string }>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))));
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
    });
    const admin = new pg.Client({ connectionString: info.url });
    await admin.connect();
    try {
      const [t] = (await admin.query('SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1', [info.template])).rows;
      assert.deepEqual(t, { datistemplate: true, datallowconn: false }, 'a template nobody connects to');
      Object.assign(process.env, { TEST_DATABASE: 'postgres', TEST_PG_URL: info.url, TEST_PG_TEMPLATE: info.template });
      const s = await startTestServer();
      try {
        assert.equal((await s.api('GET', '/api/auth/me', { token: await s.login() })).status, 200);
        const mine = (await admin.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`t${process.pid}_%`])).rows.map((r) => r.datname);
        assert.equal(mine.length, 1, 'the server’s database is on the run’s cluster');
        const db = new pg.Client({ connectionString: info.url.replace(/\/postgres$/, `/${mine[0]}`) });
        await db.connect();
        const applied = (await db.query('SELECT count(*)::int AS n FROM _migrations')).rows[0].n;
        await db.end();
        assert.ok(applied > 10, `the copy came migrated (${applied} migrations)`);
      } finally {
        await s.close();
      }
    } finally {
      await admin.end();
    }
    child.stdin!.end();
    assert.equal(await exited, 0);
    const refused = await new pg.Client({ connectionString: info.url, connectionTimeoutMillis: 5000 }).connect().then(
      () => false,
      () => true,
    );
    assert.ok(refused, 'the cluster is stopped once the runner closed its stdin');
  } finally {
    process.env = saved;
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  }
});
