/**
 * App locks across two instances on one PostgreSQL (in-process servers of
 * the sources, each with its own data folder): the access check reads an
 * in-memory copy of the locks (catalogue/file-locks.ts), so a lock set,
 * cleared or expired through one instance must reach the other through the
 * change channel. A write through B is refused with 423 `locked` within a
 * short bounded poll after the lock was set through A, accepted again once
 * A cleared it; the holder's rename through A moves the refusal to the new
 * name on B; and a lock that expired stops refusing through B at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemActor } from '../../server/auth';
import { startTestServer, type TestServer } from '../helpers/server';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

const sign = { plugin: 'sign', label: 'Fill and sign', reason: 'signing', reason_text: 'Out for signature' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const skip = needPostgres();
describe('app locks across two instances on one PostgreSQL', { skip: skip ?? false, timeout: 120_000 }, () => {
  let cluster: PgCluster;
  let a: TestServer;
  let b: TestServer;
  let tokenB: string;
  let sid: number;
  const root = tempDir('filedock-locks-two-');
  const keys = tempDir('filedock-locks-key-');

  before(async () => {
    cluster = await startPostgres();
    const url = await cluster.createDatabase('locks_two');
    for (const n of ['a.pdf', 'b.pdf']) writeFileSync(join(root.dir, n), n);
    // One secret key for every instance on the database.
    const keyFile = join(keys.dir, 'filedock.key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    a = await startTestServer({ SERVICE_DATABASE_URL: url, SERVICE_SECRET_KEY_FILE: keyFile });
    b = await startTestServer({ SERVICE_DATABASE_URL: url, SERVICE_SECRET_KEY_FILE: keyFile });
    const tokenA = await a.login();
    tokenB = await b.login();
    // Polling, not watched: both instances would watch the one folder, and a watcher's folder check between the
    // rename on disk and A's move of the row catalogues the new name as a new node, dropping the lock with the old
    // one (seen once in CI at load 8; a race of the catalogue's, docs/operations.md "Known races", not of the locks).
    const st = await a.api('POST', '/api/admin/storages', {
      token: tokenA,
      body: { name: 'Docs', driver: 'local', config: { path: root.dir }, sync_mode: 'poll' },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    sid = a.server.services.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Docs')!.id;
    assert.equal((await a.api('GET', '/api/files/manager?path=/Docs', { token: tokenA })).status, 200, 'the files catalogued');
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await cluster?.destroy();
    root.cleanup();
    keys.cleanup();
  });

  /** Saves `name` through B until it answers `status` (10 s at most); the last answer. */
  const saveThroughB = async (name: string, status: number) => {
    let r = { status: 0, body: null as any };
    for (let i = 0; i < 100; i++) {
      r = await b.api('POST', '/api/files/save-text', { token: tokenB, body: { path: `/Docs/${name}`, content: `b ${i}` } });
      if (r.status === status) break;
      await sleep(100);
    }
    assert.equal(r.status, status, JSON.stringify(r.body));
    return r;
  };

  test('a lock set through A refuses a write through B, and the write goes through once A cleared it', async () => {
    await saveThroughB('a.pdf', 200);
    await a.server.services.files.locks.set(sid, 'a.pdf', sign, null);
    const r = await saveThroughB('a.pdf', 423);
    assert.equal(r.body.error, 'locked');
    assert.deepEqual(r.body.details, {
      plugin: 'sign',
      plugin_label: 'Fill and sign',
      path: '/Docs/a.pdf',
      reason: 'signing',
      reason_text: 'Out for signature',
      until: null,
    });
    assert.equal(b.server.services.files.locks.of(sid, 'a.pdf')?.plugin, 'sign', 'B shows the lock too');
    assert.equal(await a.server.services.files.locks.clear(sid, 'a.pdf', 'sign'), true);
    await saveThroughB('a.pdf', 200);
  });

  test('the holder renaming its locked file through A: B refuses the new name and frees the old one', async () => {
    const { token } = await a.server.services.files.locks.set(sid, 'a.pdf', sign, null);
    await saveThroughB('a.pdf', 423);
    await a.server.services.files.forActor(systemActor('sign-job')).holding(token).rename('/Docs/a.pdf', 'a-signed.pdf');
    assert.equal((await saveThroughB('a-signed.pdf', 423)).body.details.path, '/Docs/a-signed.pdf');
    await saveThroughB('a.pdf', 200);
    assert.equal(await a.server.services.files.locks.clear(sid, 'a-signed.pdf', 'sign'), true);
  });

  test('a lock that expired no longer refuses a write through B', async () => {
    const until = new Date(Date.now() + 3000).toISOString();
    await a.server.services.files.locks.set(sid, 'b.pdf', { ...sign, until }, null);
    assert.equal((await saveThroughB('b.pdf', 423)).body.details.until, until);
    await sleep(Math.max(0, Date.parse(until) - Date.now()) + 1);
    // At once, not after the expiry sweep: the expiry is compared in memory.
    const r = await b.api('POST', '/api/files/save-text', { token: tokenB, body: { path: '/Docs/b.pdf', content: 'after' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(b.server.services.files.locks.of(sid, 'b.pdf'), null);
  });
});
