/**
 * `service db migrate-to`: a catalogue filled through the real service
 * (accounts, a storage, files and folders, a replaced file's version, a
 * trashed file, a share, audit rows) is copied into an empty PostgreSQL
 * database by the real command line; the rows match table by table, the
 * SQLite file is byte-identical afterwards, and every refusal (unreachable,
 * missing or non-empty database, a running service, a row PostgreSQL cannot
 * take) leaves the target as it was.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startTestServer, uploadFile, type TestServer } from '../helpers/server';
import { freePort, tempDir } from '../helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { SERVICE_CLI } from '../helpers/child-server';

const CLI = SERVICE_CLI;
const migrateTo = (dataDir: string, url: string) =>
  spawnSync(process.execPath, [...CLI, 'db', 'migrate-to', url], {
    env: { ...process.env, SERVICE_DATA_DIR: dataDir, SERVICE_UPDATE_CHECK: '0' },
    encoding: 'utf8',
    timeout: 120_000,
  });
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const relations = async (url: string) => {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return (await c.query(`SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = 'public'::regnamespace`)).rows[0].n as number;
  } finally {
    await c.end();
  }
};
/** Rows of a table as comparable JSON (pg returns int8 as text; SQLite as numbers). */
const norm = (rows: Array<Record<string, unknown>>) =>
  rows
    .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' || typeof v === 'bigint' ? String(v) : v]))))
    .sort();

/** Copies the catalogue file with its WAL, when there is one. */
const copyCatalogue = (from: string, to: string) => {
  for (const f of ['filedock.sqlite', 'filedock.sqlite-wal', 'filedock.sqlite-shm']) {
    if (existsSync(join(from, f))) copyFileSync(join(from, f), join(to, f));
  }
};

const skip = needPostgres();
describe('service db migrate-to', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let s: TestServer | undefined;
  let dataDir: string;
  const files = tempDir('filedock-migrate-files-');
  const keep = tempDir('filedock-migrate-data-');

  before(async () => {
    cluster = await startPostgres();
    s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: files.dir, SERVICE_DEFAULT_STORAGE_NAME: 'Files' });
    dataDir = s.dataDir;
    const token = await s.login();
    const admin = { token };
    assert.equal((await s.api('PATCH', '/api/admin/protection', { ...admin, body: { versions_keep_n: 5 } })).status, 200);
    for (const [email, role] of [
      ['Bea@Example.test', 'user'],
      ['carl@example.test', 'viewer'],
    ]) {
      const r = await s.api('POST', '/api/admin/users', { ...admin, body: { email, username: email.split('@')[0], role, password: 'a-long-password-1' } });
      assert.ok(r.status === 200 || r.status === 201, JSON.stringify(r.body));
    }
    assert.equal((await s.api('POST', '/api/files/mkdir', { ...admin, body: { path: '/Files/docs' } })).status, 200);
    await uploadFile(s, token, '/Files/docs', 'report.txt', Buffer.from('first draft\n'));
    await uploadFile(s, token, '/Files/docs', 'report.txt', Buffer.from('second draft, longer\n'));
    assert.equal((await s.api('POST', '/api/files/mkdir', { ...admin, body: { path: '/Files/docs/Ünïcode – ✓' } })).status, 200);
    await uploadFile(s, token, '/Files/docs', 'notes.md', Buffer.from('# nötes\n'));
    await uploadFile(s, token, '/Files', 'gone.bin', Buffer.alloc(3000, 7));
    assert.equal((await s.api('POST', '/api/files/delete', { ...admin, body: { paths: ['/Files/gone.bin'] } })).status, 200);
    const share = await s.api('POST', '/api/files/share', { ...admin, body: { path: '/Files/docs/report.txt', max_downloads: 3 } });
    assert.equal(share.status, 200, JSON.stringify(share.body));

    // The lock of a running service is honoured: a copy would be stale at once.
    const locked = migrateTo(dataDir, await cluster.createDatabase('while_running'));
    assert.equal(locked.status, 3, locked.stderr);
    assert.equal(await relations(cluster.url('while_running')), 0);

    // The service's own data folder is removed by close(): keep the closed catalogue in a folder of ours.
    await s.server.close();
    copyCatalogue(dataDir, keep.dir);
    dataDir = keep.dir;
  });

  after(async () => {
    await s?.close().catch(() => {});
    await cluster?.destroy();
    files.cleanup();
    keep.cleanup();
  });

  test('copies every table into an empty database, verified, leaving the SQLite file untouched', async () => {
    const file = join(dataDir, 'filedock.sqlite');
    const lite = new Database(file, { readonly: true });
    const count = (t: string) => (lite.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    // The fixture holds what the copy must carry; otherwise this test would prove little.
    for (const t of ['users', 'storages', 'shares', 'nodes', 'versions', 'trash_items', 'audit', 'search_fts', 'settings', 'sessions'])
      assert.ok(count(t) > 0, `fixture has ${t} rows`);
    const before = sha256(file);

    const url = await cluster.createDatabase('target');
    const r = migrateTo(dataDir, url);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /copied and verified \d+ tables, \d+ rows/);
    assert.equal(sha256(file), before, 'the SQLite file is byte-identical');

    const c = new pg.Client(url);
    await c.connect();
    try {
      const tables = (
        lite
          .prepare(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'search_fts_%' AND name <> '_migrations'",
          )
          .all() as Array<{ name: string }>
      ).map((t) => t.name);
      assert.ok(tables.length > 40);
      for (const t of tables) {
        const want = norm(lite.prepare(`SELECT * FROM ${t}`).all() as Array<Record<string, unknown>>);
        const got = norm((await c.query(`SELECT * FROM ${pg.escapeIdentifier(t)}`)).rows);
        assert.deepEqual(got, want, `table ${t}`);
      }
      const fts = norm(lite.prepare('SELECT rowid, name, body FROM search_fts').all() as Array<Record<string, unknown>>);
      assert.deepEqual(norm((await c.query('SELECT rowid, name, body FROM search_fts')).rows), fts);
      const applied = (await c.query('SELECT name FROM _migrations ORDER BY name')).rows.map((x) => x.name);
      assert.deepEqual(
        applied,
        (lite.prepare('SELECT name FROM _migrations ORDER BY name').all() as Array<{ name: string }>).map((x) => x.name),
      );

      // Identities continue after the copied ids instead of colliding with them.
      const maxUser = Number((await c.query('SELECT max(id) AS m FROM users')).rows[0].m);
      const next = await c.query(
        `INSERT INTO users (email, username, role, created_at, updated_at) VALUES ('new@example.test', 'new', 'user', 'now', 'now') RETURNING id`,
      );
      assert.equal(Number(next.rows[0].id), maxUser + 1);
      await c.query(`DELETE FROM users WHERE email = 'new@example.test'`);
      // COLLATE NOCASE carried over as citext: the mixed-case e-mail is found in any case.
      assert.equal((await c.query(`SELECT count(*)::int AS n FROM users WHERE email = 'bea@example.test'`)).rows[0].n, 1);
    } finally {
      await c.end();
      lite.close();
    }

    // A second copy into the now-filled database is refused and changes nothing.
    const n = await relations(url);
    const again = migrateTo(dataDir, url);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /not empty/);
    assert.equal(await relations(url), n);
  });

  test('a wrong, unreachable or missing database is a clear error with exit 2', async () => {
    const port = await freePort();
    const refused = migrateTo(dataDir, `postgres://filedock:secret-pw@127.0.0.1:${port}/x`);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /connection refused/);
    assert.doesNotMatch(refused.stderr, /secret-pw/, 'the password is never printed');
    const missing = migrateTo(dataDir, cluster.url('no_such_db'));
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /does not exist/);
    const wrongScheme = migrateTo(dataDir, 'mysql://root@127.0.0.1/x');
    assert.equal(wrongScheme.status, 2);
    assert.match(wrongScheme.stderr, /postgres:\/\//);
  });

  test('a row PostgreSQL refuses rolls the whole copy back: the database stays empty', async () => {
    const bad = tempDir('filedock-migrate-bad-');
    try {
      mkdirSync(bad.dir, { recursive: true });
      copyCatalogue(dataDir, bad.dir);
      const db = new Database(join(bad.dir, 'filedock.sqlite'));
      // SQLite keeps text that does not look like a number in an INTEGER column; bigint does not.
      try {
        db.prepare(`UPDATE nodes SET size = 'lots' WHERE id = (SELECT max(id) FROM nodes)`).run();
      } catch (e) {
        throw new Error(`fixture: ${(e as Error).message}`);
      }
      db.close();
      const url = await cluster.createDatabase('rollback');
      const r = migrateTo(bad.dir, url);
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /nothing was kept/);
      assert.equal(await relations(url), 0, 'no table, index or sequence left behind');
    } finally {
      bad.cleanup();
    }
  });
});

describe('SERVICE_DATABASE_URL', () => {
  test('a URL that is not postgres:// is a configuration error naming the key (exit 2)', () => {
    const { dir, cleanup } = tempDir();
    try {
      const r = spawnSync(process.execPath, [...CLI, 'serve'], {
        env: { ...process.env, SERVICE_DATA_DIR: dir, SERVICE_PORT: '0', SERVICE_UPDATE_CHECK: '0', SERVICE_DATABASE_URL: 'mysql://root@db/filedock' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 2);
      assert.match(r.stderr, /SERVICE_DATABASE_URL: must be a postgres:\/\/ URL/);
      assert.ok(!existsSync(join(dir, 'filedock.sqlite')), 'nothing created in the data folder');
    } finally {
      cleanup();
    }
  });
});
