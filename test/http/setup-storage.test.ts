/**
 * First run with no storage variables: the set-up page is offered a first
 * storage (`~/Filedock` of the service's user), the folder is made when
 * missing, checked before the administrator exists, and saved like an admin's.
 */
import { describe, test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const OWNER = { email: 'owner@example.test', username: 'owner', password: 'owner-password' };

describe('first-run setup with a first storage', () => {
  let s: TestServer;
  const tmp = tempDir('filedock-first-');
  before(async () => {
    s = await startTestServer({ SERVICE_ADMIN_EMAIL: '', SERVICE_ADMIN_PASSWORD: '' });
  });
  after(async () => {
    await s.close();
    tmp.cleanup();
  });

  test('the local owner is offered ~/Filedock; a proxied caller is not told the home folder', async () => {
    const st = await s.api('GET', '/api/auth/setup');
    assert.deepEqual(st.body, { needed: true, local: true, storage: { suggested_path: join(homedir(), 'Filedock') } });
    const remote = await s.api('GET', '/api/auth/setup', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.deepEqual(remote.body, { needed: true, local: false });
  });

  test('a bad folder is refused on storage_path and leaves set-up open', async () => {
    const file = join(tmp.dir, 'a-file');
    writeFileSync(file, 'x');
    for (const bad of ['relative/folder', file, join(file, 'below')]) {
      const r = await s.api('POST', '/api/auth/setup', { body: { ...OWNER, storage_path: bad } });
      assert.equal(r.status, 400, `${bad}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error, 'validation_failed');
      assert.equal(r.body.details.field, 'storage_path');
      assert.equal(typeof r.body.message, 'string');
    }
    assert.equal((await s.api('GET', '/api/auth/setup')).body.needed, true);
  });

  test('a missing folder is created and becomes a storage the admin can upload into', async () => {
    const folder = join(tmp.dir, 'deep', 'Filedock');
    const r = await s.api('POST', '/api/auth/setup', { body: { ...OWNER, storage_path: folder } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.user.role, 'admin');
    assert.deepEqual(r.body.storage, { id: r.body.storage.id, name: 'Files' });
    assert.ok(existsSync(folder));
    const token = r.body.token as string;
    const list = await s.api('GET', '/api/admin/storages', { token });
    assert.deepEqual(
      list.body.storages.map((x: { name: string; driver: string }) => [x.name, x.driver]),
      [['Files', 'local']],
    );
    const form = new FormData();
    form.append('path', '/Files');
    form.append('file', new Blob(['first bytes']), 'hello.txt');
    const up = await s.api('POST', '/api/files/upload', { token, raw: form });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.equal(readFileSync(join(folder, 'hello.txt'), 'utf8'), 'first bytes');
    // Done: nothing is offered any more.
    assert.deepEqual((await s.api('GET', '/api/auth/setup')).body, { needed: false, local: true });
  });
});

describe('first-run setup when the environment gave a storage', () => {
  test('no first storage is offered, and one sent anyway is refused', async () => {
    const { dir, cleanup } = tempDir('filedock-first-env-');
    const s = await startTestServer({
      SERVICE_ADMIN_EMAIL: '',
      SERVICE_ADMIN_PASSWORD: '',
      SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
      SERVICE_DEFAULT_STORAGE_PATH: join(dir, 'env'),
    });
    try {
      assert.deepEqual((await s.api('GET', '/api/auth/setup')).body, { needed: true, local: true });
      const r = await s.api('POST', '/api/auth/setup', { body: { ...OWNER, storage_path: join(dir, 'other') } });
      assert.equal(r.status, 400);
      assert.equal(r.body.details.field, 'storage_path');
      assert.equal(existsSync(join(dir, 'other')), false);
      assert.equal((await s.api('POST', '/api/auth/setup', { body: OWNER })).status, 200);
    } finally {
      await s.close();
      cleanup();
    }
  });
});
