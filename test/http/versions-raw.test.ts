/**
 * GET /api/files/versions/raw?path=&id=: an old version's bytes, to look at or
 * download before restoring it (issue 39, 17). Viewer level, like the list.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

describe('GET /api/files/versions/raw', () => {
  let s: TestServer;
  let admin: string;
  let viewer: string;
  let root: string;
  let cleanup: () => void;
  const raw = (path: string, id: number | string, token: string | null = admin, extra = '') =>
    fetch(`${s.url}/api/files/versions/raw?path=${encodeURIComponent(path)}&id=${id}${extra}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-vraw-'));
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Docs', driver: 'local', config: { path: root } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    const u = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: 'v@example.test', username: 'v1', password: 'viewer-password-1', role: 'viewer' },
    });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    viewer = await s.login('v@example.test', 'viewer-password-1');
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('serves an old version under the file name, inline on request, without changing the file', async () => {
    for (const content of ['first draft\n', 'second draft\n', 'third\n']) {
      const r = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/notes.md', content } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const list = await s.api('GET', '/api/files/versions?path=/Docs/notes.md', { token: admin });
    const [newer, oldest] = list.body.versions;
    const res = await raw('/Docs/notes.md', oldest.id);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'first draft\n');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="notes\.md"/);
    assert.match(res.headers.get('content-type') ?? '', /^text\/markdown/);
    assert.equal(res.headers.get('content-length'), '12');
    const inline = await raw('/Docs/notes.md', newer.id, viewer, '&inline=1');
    assert.equal(inline.status, 200, 'a viewer may look at versions');
    assert.match(inline.headers.get('content-disposition') ?? '', /^inline/);
    assert.equal(await inline.text(), 'second draft\n');
    assert.match(inline.headers.get('content-security-policy') ?? '', /^sandbox/, 'an old version shown in a tab runs nothing');
    const ranged = await fetch(`${s.url}/api/files/versions/raw?path=/Docs/notes.md&id=${oldest.id}`, {
      headers: { authorization: `Bearer ${admin}`, range: 'bytes=0-4' },
    });
    assert.equal(ranged.status, 206);
    assert.equal(await ranged.text(), 'first');
    assert.equal(readFileSync(join(root, 'notes.md'), 'utf8'), 'third\n', 'looking changes nothing');
  });

  test('refusals: another file’s id, an unknown id, a bad id, no session', async () => {
    await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/other.txt', content: 'x' } });
    const id = (await s.api('GET', '/api/files/versions?path=/Docs/notes.md', { token: admin })).body.versions[0].id;
    const wrong = await raw('/Docs/other.txt', id);
    assert.equal(wrong.status, 404);
    assert.equal((await wrong.json()).error, 'not_found');
    assert.equal((await raw('/Docs/notes.md', 999999)).status, 404);
    const bad = await raw('/Docs/notes.md', 'abc');
    assert.equal(bad.status, 400);
    assert.equal(typeof (await bad.json()).message, 'string');
    assert.equal((await raw('/Docs/notes.md', id, null)).status, 401);
  });
});
