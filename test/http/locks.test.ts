/**
 * App locks and app state through the HTTP doors of a real server: a locked
 * file refuses every write verb with 423 `locked` and the spec's details,
 * reads go on, the holder's token writes, listings show `locked`, `lock` and
 * `app_state`, and the file is writable again once the lock is cleared or has
 * expired. Locks are set through the module itself (the app routes that will
 * set them come with the app host).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemActor } from '../../server/auth';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

const sign = { plugin: 'sign', label: 'Fill and sign', reason: 'signing', reason_text: 'Out for signature' };

describe('app locks on the HTTP doors', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;
  let sid: number;
  const files = () => s.server.services.files;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-locks-http-'));
    mkdirSync(join(root, 'f'));
    for (const [n, body] of [
      ['a.pdf', 'first'],
      ['f/b.pdf', 'bee'],
      ['other.txt', 'other'],
      ['free.txt', 'free'],
      ['gone.txt', 'gone'],
    ])
      writeFileSync(join(root, n), body);
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Docs', driver: 'local', config: { path: root } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    sid = s.server.services.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Docs')!.id;
    // Catalogue the files (a first look), and keep a version of a.pdf to restore later.
    assert.equal((await s.api('GET', '/api/files/manager?path=/Docs/f', { token: admin })).status, 200);
    assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/a.pdf', content: 'second' } })).status, 200);
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  const refused = (r: { status: number; body: any }, path: string) => {
    assert.equal(r.status, 423, JSON.stringify(r.body));
    assert.equal(r.body.error, 'locked');
    assert.match(r.body.message, /locked by Fill and sign: Out for signature/);
    assert.deepEqual(r.body.details, { plugin: 'sign', plugin_label: 'Fill and sign', path, reason: 'signing', reason_text: 'Out for signature', until: null });
  };
  const entry = async (folder: string, name: string) => {
    const r = await s.api('GET', `/api/files/manager?path=${encodeURIComponent(folder)}`, { token: admin });
    assert.equal(r.status, 200);
    return r.body.entries.find((e: any) => e.name === name);
  };

  test('every write verb is refused with 423 and the lock’s details; reads and copies go on', async () => {
    const { token } = await files().locks.set(sid, 'a.pdf', sign, null);
    try {
      const a = '/Docs/a.pdf';
      refused(await s.api('POST', '/api/files/save-text', { token: admin, body: { path: a, content: 'x' } }), a);
      refused(await s.api('POST', '/api/files/rename', { token: admin, body: { path: a, new_name: 'z.pdf' } }), a);
      refused(await s.api('POST', '/api/files/move', { token: admin, body: { from: a, to: '/Docs/f' } }), a);
      refused(await s.api('POST', '/api/files/copy', { token: admin, body: { from: '/Docs/other.txt', to: a, overwrite: true } }), a);
      refused(await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: a } }), a);
      refused(await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: a, size: 3 } }), a);
      const versions = await s.api('GET', `/api/files/versions?path=${a}`, { token: admin });
      refused(await s.api('POST', '/api/files/versions/restore', { token: admin, body: { path: a, id: versions.body.versions[0].id } }), a);
      const form = new FormData();
      form.append('path', '/Docs');
      form.append('file', new Blob(['new bytes']), 'a.pdf');
      const up = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
      refused({ status: up.status, body: await up.json() }, a);
      const del = await s.api('POST', '/api/files/delete', { token: admin, body: { paths: [a, '/Docs/free.txt'] } });
      assert.deepEqual(del.body.failed, [{ path: a, error: 'locked' }]);
      assert.deepEqual(del.body.deleted, ['/Docs/free.txt'], 'the other path of the request is not held back');
      assert.equal(readFileSync(join(root, 'a.pdf'), 'utf8'), 'second', 'nothing reached the file');

      // Reading goes on; a copy is a new file and carries no lock.
      const raw = await fetch(`${s.url}/api/files/raw?path=${encodeURIComponent(a)}`, { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(await raw.text(), 'second');
      assert.equal((await s.api('POST', '/api/files/copy', { token: admin, body: { from: a, to: '/Docs/copy.pdf' } })).status, 200);
      assert.equal((await entry('/Docs', 'copy.pdf')).locked, false);

      // The file service itself (the assistant's tools, gateways, jobs) refuses the same way; the holder's face writes.
      const sys = files().forActor(systemActor('test'));
      await assert.rejects(sys.saveText(a, 'x'), (e: any) => e.code === 'locked');
      const saved = await sys.holding(token).saveText(a, 'signed');
      assert.equal(saved.locked, true, 'the holder’s write answers with the file still locked');
      assert.equal(readFileSync(join(root, 'a.pdf'), 'utf8'), 'signed');
    } finally {
      await files().locks.clear(sid, 'a.pdf', 'sign');
    }
    assert.equal(
      (await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/a.pdf', content: 'after' } })).status,
      200,
      'cleared: writable again',
    );
  });

  test('an upload opened before the lock cannot be finalized while it holds', async () => {
    const init = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/Docs/other.txt', size: 3 } });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const id = init.body.upload_id;
    const put = await fetch(`${s.url}/api/files/upload/chunk?upload_id=${id}&part=1`, {
      method: 'POST',
      body: 'abc',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/octet-stream' },
    });
    assert.equal(put.status, 200, await put.clone().text());
    const { etag } = await put.json();
    await files().locks.set(sid, 'other.txt', sign, null);
    try {
      refused(await s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: id, etags: [{ part: 1, etag }] } }), '/Docs/other.txt');
      assert.equal(readFileSync(join(root, 'other.txt'), 'utf8'), 'other');
    } finally {
      await files().locks.clear(sid, 'other.txt', 'sign');
    }
    const done = await s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: id, etags: [{ part: 1, etag }] } });
    assert.equal(done.status, 200, 'the session stayed open and publishes once the lock is gone');
    assert.equal(readFileSync(join(root, 'other.txt'), 'utf8'), 'abc');
  });

  test('a folder holding a locked file is neither moved, renamed nor deleted', async () => {
    await files().locks.set(sid, 'f/b.pdf', sign, null);
    try {
      refused(await s.api('POST', '/api/files/rename', { token: admin, body: { path: '/Docs/f', new_name: 'g' } }), '/Docs/f/b.pdf');
      refused(await s.api('POST', '/api/files/move', { token: admin, body: { from: '/Docs/f', to: '/Docs/h' } }), '/Docs/f/b.pdf');
      const del = await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/f'] } });
      assert.deepEqual(del.body.failed, [{ path: '/Docs/f', error: 'locked' }]);
      assert.equal(readFileSync(join(root, 'f/b.pdf'), 'utf8'), 'bee');
      // A new file beside it is fine: the folder itself is not locked.
      assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/f/new.txt', content: 'n' } })).status, 200);
    } finally {
      await files().locks.clear(sid, 'f/b.pdf', 'sign');
    }
  });

  test('listings show locked, lock and app_state; the holder’s rename keeps the lock', async () => {
    await files().appState.set(sid, 'a.pdf', 'sign', 'awaiting', true);
    await files().appState.set(sid, 'a.pdf', 'approve', 'pending', true);
    const { token } = await files().locks.set(sid, 'a.pdf', sign, null);
    try {
      const e = await entry('/Docs', 'a.pdf');
      assert.equal(e.locked, true);
      assert.deepEqual(e.lock, { plugin: 'sign', plugin_label: 'Fill and sign', reason: 'signing', reason_text: 'Out for signature', until: null });
      assert.deepEqual(e.app_state, ['sign:awaiting', 'approve:pending']);
      const other = await entry('/Docs', 'other.txt');
      assert.equal(other.locked, false);
      assert.equal(other.lock, null);
      assert.deepEqual(other.app_state, []);
      const found = await s.api('GET', '/api/files/search?q=a.pdf', { token: admin });
      assert.equal(found.body.entries.find((x: any) => x.name === 'a.pdf')?.locked, true, 'search rows too');

      const renamed = await files().forActor(systemActor('sign-job')).holding(token).rename('/Docs/a.pdf', 'a-signed.pdf');
      assert.equal(renamed.locked, true);
      const moved = await entry('/Docs', 'a-signed.pdf');
      assert.equal(moved.locked, true, 'the lock followed the rename');
      assert.deepEqual(moved.app_state, ['sign:awaiting', 'approve:pending'], 'so did the app state');
      refused(await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/a-signed.pdf', content: 'x' } }), '/Docs/a-signed.pdf');
      // Many app-state items, as apps will put them: the 33rd is refused.
      for (let i = 0; i < 30; i++) await files().appState.set(sid, 'a-signed.pdf', 'sign', `k${i}`, true);
      await assert.rejects(files().appState.set(sid, 'a-signed.pdf', 'sign', 'k30', true), (err: any) => err.code === 'too_many');
      assert.equal((await entry('/Docs', 'a-signed.pdf')).app_state.length, 32);
    } finally {
      await files().locks.clear(sid, 'a-signed.pdf', 'sign');
    }
    assert.equal((await entry('/Docs', 'a-signed.pdf')).locked, false, 'cleared: the listing says so at once');
  });

  test('a locked file a sync finds gone from the backend takes its lock with it: the name is writable again', async () => {
    await files().locks.set(sid, 'gone.txt', sign, null);
    refused(await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/gone.txt', content: 'x' } }), '/Docs/gone.txt');
    rmSync(join(root, 'gone.txt'));
    await s.server.catalogue.syncer.requestSync(sid);
    let r = { status: 0, body: null as any };
    for (let i = 0; i < 100 && r.status !== 200; i++) {
      if (i) await new Promise((res) => setTimeout(res, 100));
      r = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/gone.txt', content: 'new' } });
    }
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(readFileSync(join(root, 'gone.txt'), 'utf8'), 'new');
    assert.equal(files().locks.of(sid, 'gone.txt'), null);
  });

  test('a lock past its `until` stops refusing, and the listing drops it', async () => {
    const until = new Date(Date.now() + 700).toISOString();
    await files().locks.set(sid, 'other.txt', { ...sign, until }, null);
    const r = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/other.txt', content: 'x' } });
    assert.equal(r.status, 423);
    assert.equal(r.body.details.until, until);
    assert.equal((await entry('/Docs', 'other.txt')).lock.until, until);
    await new Promise((res) => setTimeout(res, 800));
    assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/other.txt', content: 'later' } })).status, 200);
    // The expiry timer removes the row and drops the folder's cached pages (a loaded machine may run it late).
    let shown = true;
    for (let i = 0; i < 50 && shown; i++) {
      shown = (await entry('/Docs', 'other.txt')).locked;
      if (shown) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(shown, false);
  });
});
