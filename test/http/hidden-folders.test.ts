/**
 * The service's own folders (`.service-trash`, `.versions`, `.service-staging`)
 * and temp files never show in listings, search, share pages or share ZIPs;
 * the trash shows its items only in the Trash view. A chunked upload leaves
 * nothing in the user's folder.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

const SERVICE = ['.service-trash', '.versions', '.service-staging', '.~fd-'];
const leaks = (text: string) => SERVICE.filter((n) => text.includes(n));

describe('hidden service folders', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-hidden-'));
    // What a storage may already hold: trash and versions of an earlier install, a staging folder of an older build.
    for (const d of ['.service-trash/old', '.versions/notes.txt', '.service-staging/sess/parts', 'docs']) mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(root, '.service-trash/old/findme-trashed.txt'), 'findme');
    writeFileSync(join(root, '.versions/notes.txt/findme-v1'), 'findme');
    writeFileSync(join(root, '.service-staging/sess/data'), 'findme');
    writeFileSync(join(root, 'docs/.~fd-findme-temp'), 'findme');
    writeFileSync(join(root, 'docs/findme.txt'), 'findme');
    s = await startTestServer();
    admin = await s.login();
    const r = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'H', driver: 'local', config: { path: root } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (let i = 0; i < 100 && !s.server.db.sqlite!.prepare("SELECT 1 FROM nodes WHERE path = 'docs/findme.txt'").get(); i++)
      await new Promise((r) => setTimeout(r, 50));
    // Make a version, a trashed file and a finished chunked upload through the API.
    for (const c of ['one', 'two'])
      assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/H/docs/findme-edited.txt', content: c } })).status, 200);
    assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/H/docs/findme-deleted.txt', content: 'x' } })).status, 200);
    assert.equal((await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/H/docs/findme-deleted.txt'] } })).status, 200);
    const init = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/H/docs/findme-chunked.bin', size: 3 } });
    const part = await s.api('POST', `/api/files/upload/chunk?upload_id=${init.body.upload_id}&part=1`, {
      token: admin,
      raw: 'abc',
      headers: { 'content-type': 'application/octet-stream' },
    });
    const open = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/H/docs/findme-open.bin', size: 3 } });
    assert.equal(open.status, 200, 'an upload left open: its session must not show either');
    assert.equal(
      (
        await s.api('POST', '/api/files/upload/finalize', {
          token: admin,
          body: { upload_id: init.body.upload_id, etags: [{ part: 1, etag: part.body.etag }] },
        })
      ).status,
      200,
    );
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('listings (root and folder), a full resync and search show none of them', async () => {
    await s.server.catalogue.syncer.requestSync(s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'H')!.id);
    await new Promise((r) => setTimeout(r, 500));
    for (const path of ['/H', '/H/docs']) {
      const l = await s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}`, { token: admin });
      assert.equal(l.status, 200);
      assert.deepEqual(leaks(JSON.stringify(l.body)), [], path);
    }
    const names = (await s.api('GET', '/api/files/manager?path=/H/docs', { token: admin })).body.entries.map((e: { name: string }) => e.name).sort();
    assert.deepEqual(names, ['findme-chunked.bin', 'findme-edited.txt', 'findme.txt']);
    const found = await s.api('GET', '/api/files/search?q=findme', { token: admin });
    assert.equal(found.status, 200);
    assert.deepEqual(leaks(JSON.stringify(found.body)), []);
    assert.deepEqual(found.body.entries.map((e: { name: string }) => e.name).sort(), names);
    assert.equal(
      s.server.db.sqlite!.prepare("SELECT count(*) FROM nodes WHERE path LIKE '.service%' OR path LIKE '.versions%' OR path LIKE '%.~fd-%'").pluck().get(),
      0,
    );
  });

  test('share pages and share ZIPs of the storage root show none of them', async () => {
    const b = await s.api('POST', '/api/files/share', { token: admin, body: { path: '/H' } });
    assert.equal(b.status, 200, JSON.stringify(b.body));
    const page = await fetch(`${s.url}/s/${b.body.token}`, { headers: { accept: 'text/html' } });
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.match(html, /docs/);
    assert.deepEqual(leaks(html), []);
    const zip = Buffer.from(await (await fetch(`${s.url}/s/${b.body.token}?zip=1`)).arrayBuffer());
    assert.deepEqual(leaks(zip.toString('latin1')), []);
    assert.ok(zip.toString('latin1').includes('docs/findme.txt'));
  });

  test("the Trash view lists what was deleted; the user's folder holds no staging", async () => {
    const t = await s.api('GET', '/api/files/trash', { token: admin });
    assert.equal(t.status, 200);
    assert.ok(JSON.stringify(t.body).includes('findme-deleted.txt'), JSON.stringify(t.body));
    // The older build's staging folder is still there (it may hold a session to finish); no new one appeared in it.
    assert.deepEqual(readdirSync(join(root, '.service-staging')), ['sess']);
  });
});
