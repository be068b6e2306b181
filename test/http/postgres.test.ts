/**
 * The server on PostgreSQL (SERVICE_DATABASE_URL) through its pool: the same HTTP behaviour as on SQLite for sign-in, folders, uploads,
 * the listing JSON built in the database, trigram search, an exact download
 * cap and the trash; the catalogue survives a restart; a database that goes
 * away answers 503 with the envelope and is used again when it is back,
 * without restarting the server; a URL that leads nowhere stops the start
 * with exit 2.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, uploadFile, type TestServer } from '../helpers/server';
import { freePort, tempDir } from '../helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { SERVICE_CLI } from '../helpers/child-server';

const skip = needPostgres();
describe('the server on PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let url: string;
  let s: TestServer;
  const files = tempDir('filedock-pg-files-');
  // Each start gets a fresh data folder: the key lives outside it, as with several instances (the database checks it).
  const keyFile = join(files.dir, '..', `filedock-pg-${process.pid}.key`);
  writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  const env = () => ({
    SERVICE_DATABASE_URL: url,
    SERVICE_SECRET_KEY_FILE: keyFile,
    SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
    SERVICE_DEFAULT_STORAGE_PATH: files.dir,
    SERVICE_DEFAULT_STORAGE_NAME: 'Files',
  });

  before(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase('served');
    s = await startTestServer(env());
  });
  after(async () => {
    await s?.close().catch(() => {});
    await cluster?.destroy();
    files.cleanup();
    rmSync(keyFile, { force: true });
  });

  test('sign-in, folders, uploads, listing, search, a capped share and the trash', async () => {
    const token = await s.login();
    assert.equal((await s.api('POST', '/api/files/mkdir', { token, body: { path: '/Files/Reports' } })).status, 200);
    await uploadFile(s, token, '/Files/Reports', 'q3-summary.txt', Buffer.from('third quarter\n'));
    await uploadFile(s, token, '/Files', 'photo.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xd9]));

    const list = await s.api('GET', '/api/files/manager?path=/Files', { token });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.entries.map((e: { name: string; type: string }) => `${e.type}:${e.name}`),
      ['dir:Reports', 'file:photo.jpg'],
      'folders first',
    );
    const photo = list.body.entries[1];
    assert.equal(photo.size, 4);
    assert.equal(photo.is_image, true, 'a JSON boolean, built by PostgreSQL');
    assert.equal(photo.perm, 'admin');
    assert.match(photo.modified, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const found = await s.api('GET', '/api/files/search?q=SUMMARY', { token });
    assert.equal(found.status, 200);
    assert.deepEqual(
      found.body.entries.map((e: { path: string }) => e.path),
      ['/Files/Reports/q3-summary.txt'],
      'case-free substring search',
    );

    const share = await s.api('POST', '/api/files/share', { token, body: { path: '/Files/Reports/q3-summary.txt', max_downloads: 2 } });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${s.url}/s/${share.body.token}`);
      await r.arrayBuffer();
      codes.push(r.status);
    }
    assert.deepEqual(codes, [200, 200, 404, 404], 'the cap is exact');

    const del = await s.api('POST', '/api/files/delete', { token, body: { paths: ['/Files/photo.jpg'] } });
    assert.deepEqual(del.body.deleted, ['/Files/photo.jpg']);
    const after = await s.api('GET', '/api/files/manager?path=/Files', { token });
    assert.deepEqual(
      after.body.entries.map((e: { name: string }) => e.name),
      ['Reports'],
    );

    const c = new pg.Client(url);
    await c.connect();
    try {
      assert.equal((await c.query(`SELECT count(*)::int AS n FROM trash_items`)).rows[0].n, 1, 'the trash row is in PostgreSQL');
      assert.equal((await c.query(`SELECT downloads FROM shares WHERE token = $1`, [share.body.token])).rows[0].downloads, '2');
    } finally {
      await c.end();
    }
  });

  test('the catalogue survives a restart on the same database', async () => {
    await s.close();
    s = await startTestServer(env());
    const token = await s.login();
    const list = await s.api('GET', '/api/files/manager?path=/Files/Reports', { token });
    assert.deepEqual(
      list.body.entries.map((e: { name: string }) => e.name),
      ['q3-summary.txt'],
    );
  });

  test('a database that goes away answers 503 with the envelope; it is used again when it is back', async () => {
    const token = await s.login();
    await cluster.stop('immediate');
    try {
      const t0 = Date.now();
      const down = await s.api('GET', '/api/files/manager?path=/Files', { token });
      assert.equal(down.status, 503);
      assert.equal(down.body.error, 'database_busy');
      assert.ok(down.headers.get('retry-after'));
      assert.ok(Date.now() - t0 < 5000, `answered in ${Date.now() - t0} ms`);
      const caps = await s.api('GET', '/api/capabilities');
      assert.ok(caps.status < 500 || caps.body?.error === 'database_busy', 'no crash');
    } finally {
      await cluster.start();
    }
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await s.api('GET', '/api/files/manager?path=/Files', { token })).status;
    }
    assert.equal(status, 200, 'served again without a restart');
  });

  test('a URL that leads nowhere stops the start with exit 2 and a clear message', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const r = spawnSync(process.execPath, [...SERVICE_CLI, 'serve'], {
        env: {
          ...process.env,
          SERVICE_DATA_DIR: dir,
          SERVICE_PORT: '0',
          SERVICE_UPDATE_CHECK: '0',
          SERVICE_DATABASE_URL: `postgres://x:hidden-pw@127.0.0.1:${await freePort()}/x`,
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /cannot use the database .*connection refused/);
      assert.doesNotMatch(r.stderr, /hidden-pw/);
    } finally {
      cleanup();
    }
  });
});
