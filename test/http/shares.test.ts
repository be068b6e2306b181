import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir, needTool } from '../helpers/tools';
import { sqlRow, sqlRows } from '../helpers/sql';
import { DEFAULT_TENANT } from '../../server/db';

let s: TestServer;
let admin: string;
let root: { dir: string; cleanup: () => void };
let storageId: number;

async function synced(rel: string): Promise<void> {
  await s.server.catalogue.syncer.requestSync(storageId);
  for (let i = 0; i < 100; i++) {
    if (await s.server.catalogue.nodes.get({ id: storageId, tenant_id: 1 }, rel)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${rel} never reached the catalogue`);
}

const share = async (body: Record<string, unknown>, token = admin) => {
  const r = await s.api('POST', '/api/files/share', { token, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
};

before(async () => {
  root = tempDir('filedock-shares-');
  writeFileSync(join(root.dir, 'a.txt'), 'x'.repeat(4096));
  writeFileSync(join(root.dir, 'page.html'), '<script>alert(1)</script>');
  mkdirSync(join(root.dir, 'photos'));
  for (const n of ['one.txt', 'two.jpg', '<b>x<i>.txt']) writeFileSync(join(root.dir, 'photos', n), `content of ${n}\n`.repeat(100));
  s = await startTestServer({
    SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
    SERVICE_DEFAULT_STORAGE_PATH: root.dir,
    SERVICE_DEFAULT_STORAGE_NAME: 'Files',
    SERVICE_SHARE_MAX_TTL: '7',
  });
  admin = await s.login();
  storageId = s.server.catalogue.repo.all(DEFAULT_TENANT)[0].id;
  // These suites test links on a storage everyone may use, with no home folders in it (issue 39's defaults are
  // a closed seeded storage with homes: test/http/homes.test.ts).
  assert.equal((await s.api('PATCH', `/api/admin/storages/${storageId}`, { token: admin, body: { rbac_enabled: false } })).status, 200);
  assert.equal((await s.api('PATCH', '/api/admin/homes', { token: admin, body: { enabled: false } })).status, 200);
  await synced('photos/one.txt');
});

after(async () => {
  await s.close();
  root.cleanup();
});

describe('share API', () => {
  test('create clamps the expiry to the ceiling, lists, and survives a storage rename', async () => {
    const b = await share({ path: 'Files://a.txt', ttl: '30d', comment: 'hi' });
    assert.equal(b.expiry_clamped, true);
    assert.ok(Date.parse(b.expires_at) - Date.now() <= 7 * 86_400_000 + 5000);
    assert.match(b.url, /\/s\/[A-Za-z0-9_-]{20,}$/);
    const list = await s.api('GET', '/api/files/share', { token: admin });
    assert.ok(list.body.shares.some((x: { id: number }) => x.id === b.id));
    await s.server.catalogue.repo.update(DEFAULT_TENANT, storageId, { name: 'Renamed' });
    try {
      const meta = await s.api('GET', `/api/files/share/${b.token}`);
      assert.equal(meta.status, 200);
      assert.equal(meta.body.filename, 'a.txt');
      assert.equal(meta.body.size, 4096);
      assert.equal(meta.body.requires_pin, false);
      const list2 = await s.api('GET', '/api/files/share', { token: admin });
      assert.equal(list2.body.shares.find((x: { id: number }) => x.id === b.id).path, 'Renamed://a.txt');
    } finally {
      await s.server.catalogue.repo.update(DEFAULT_TENANT, storageId, { name: 'Files' });
    }
  });

  test('a share needs editor; bad input is refused clearly', async () => {
    await s.server.auth.users.create(DEFAULT_TENANT, { email: 'viewer@example.test', password: 'viewer-password-1', role: 'viewer' });
    const viewer = await s.login('viewer@example.test', 'viewer-password-1');
    assert.equal((await s.api('POST', '/api/files/share', { token: viewer, body: { path: '/Files/a.txt' } })).status, 403);
    assert.equal((await s.api('POST', '/api/files/share', { token: admin, body: { path: '/Files/../etc/passwd' } })).status, 400);
    assert.equal((await s.api('POST', '/api/files/share', { token: admin, body: { path: '/Files/a.txt', ttl: 'soon' } })).body.error, 'validation_failed');
    assert.equal((await s.api('POST', '/api/files/share', { token: admin, body: { path: '/Files/missing.txt' } })).status, 404);
    for (const bad of ['x', 'A'.repeat(200), '%00', 'a%2F..%2F..']) assert.equal((await s.api('GET', `/api/files/share/${bad}`)).status, 404);
  });
});

describe('tenants', () => {
  test('a link and a file request moved to tenant 2 answer 404 to their owner’s routes and their public tokens, like missing ones', async () => {
    const link = await share({ path: '/Files/a.txt' });
    const dropLink = await share({ path: '/Files/photos', kind: 'drop' });
    const status = async () => ({
      meta: (await s.api('GET', `/api/files/share/${link.token}`)).status,
      page: (await fetch(`${s.url}/s/${link.token}`)).status,
      download: (await fetch(`${s.url}/api/share/${link.token}/download`)).status,
      drop: (await fetch(`${s.url}/d/${dropLink.token}`)).status,
      listed: (await s.api('GET', '/api/files/share', { token: admin })).body.shares.filter((x: { id: number }) => x.id === link.id || x.id === dropLink.id)
        .length,
    });
    assert.deepEqual(await status(), { meta: 200, page: 200, download: 200, drop: 200, listed: 2 });
    // Step 2 makes links in other tenants; until then they are moved there directly.
    await sqlRows(s.server.db, 'UPDATE shares SET tenant_id = 2 WHERE id IN (?, ?)', link.id, dropLink.id);
    try {
      assert.deepEqual(await status(), { meta: 404, page: 404, download: 404, drop: 404, listed: 0 });
      const sub = await s.api('POST', `/api/public/drop/${dropLink.token}/submissions`, { body: {} });
      assert.deepEqual([sub.status, sub.body.error], [404, 'not_found']);
      for (const key of [link.id, link.token]) {
        const revoke = await s.api('DELETE', `/api/files/share/${key}`, { token: admin });
        assert.deepEqual([revoke.status, revoke.body.error], [404, 'not_found'], `revoke by ${key}`);
        assert.equal((await s.api('POST', `/api/files/share/${key}/resume`, { token: admin })).status, 404);
      }
      const mail = await s.api('POST', '/api/files/permissions/share-mail', { token: admin, body: { id: link.id, emails: ['x@example.test'] } });
      assert.equal(mail.status, 404);
      assert.equal(
        (await sqlRow<{ revoked_at: string | null }>(s.server.db, 'SELECT revoked_at FROM shares WHERE id = ?', link.id))?.revoked_at,
        null,
        'nothing changed',
      );
    } finally {
      await sqlRows(s.server.db, 'UPDATE shares SET tenant_id = 1 WHERE id IN (?, ?)', link.id, dropLink.id);
    }
    assert.deepEqual(await status(), { meta: 200, page: 200, download: 200, drop: 200, listed: 2 }, 'back in tenant 1, both answer again');
  });
});

describe('download counting', () => {
  test('50 concurrent downloads against a cap of 5 yield exactly 5, 20 times over', async () => {
    for (let round = 0; round < 20; round++) {
      const b = await share({ path: '/Files/a.txt', max_downloads: 5 });
      const res = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const r = await fetch(`${s.url}/s/${b.token}`);
          const body = await r.arrayBuffer();
          return r.status === 200 && body.byteLength === 4096;
        }),
      );
      assert.equal(res.filter(Boolean).length, 5, `round ${round}`);
      const meta = await s.api('GET', `/api/files/share/${b.token}`);
      assert.equal(meta.status, 404);
    }
  });
});

describe('PIN gate', () => {
  test('five wrong answers lock for 10 minutes, counted on the row; a right PIN during the lock is refused', async () => {
    const b = await share({ path: '/Files/a.txt', password: true });
    assert.match(b.pin, /^\d{8}$/);
    assert.equal((await s.api('GET', `/s/${b.token}`)).status, 401);
    const wrong = b.pin === '00000000' ? '11111111' : '00000000';
    for (let i = 1; i <= 4; i++) {
      const r = await s.api('POST', `/api/share/${b.token}/verify`, { body: { pin: wrong } });
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'pin_wrong');
      assert.equal(r.body.params.tries_left, 5 - i);
    }
    const fifth = await s.api('POST', `/api/share/${b.token}/verify`, { body: { pin: wrong } });
    assert.equal(fifth.status, 429);
    assert.equal(fifth.body.error, 'locked');
    const right = await s.api('POST', `/api/share/${b.token}/verify`, { body: { pin: b.pin } });
    assert.equal(right.status, 429);
    assert.equal((await fetch(`${s.url}/s/${b.token}`, { headers: { 'x-service-pin': b.pin } })).status, 429);
    const row = (await sqlRow(s.server.db, 'SELECT locked_until FROM shares WHERE id = ?', b.id)) as { locked_until: string };
    assert.ok(Date.parse(row.locked_until) - Date.now() > 9 * 60_000);
    // The lock lapses: the right PIN then opens the link and yields a working download token.
    await sqlRows(s.server.db, 'UPDATE shares SET locked_until = ? WHERE id = ?', new Date(Date.now() - 1000).toISOString(), b.id);
    const ok = await s.api('POST', `/api/share/${b.token}/verify`, { body: { pin: b.pin } });
    assert.equal(ok.status, 200);
    const dl = await fetch(`${s.url}/api/share/${b.token}/download?dt=${encodeURIComponent(ok.body.download_token)}`);
    assert.equal(dl.status, 200);
    assert.equal((await dl.arrayBuffer()).byteLength, 4096);
    assert.equal((await fetch(`${s.url}/api/share/${b.token}/download?dt=1.2.${'0'.repeat(64)}`)).status, 401);
  });

  test('the HTML PIN form redirects with a download token', async () => {
    const b = await share({ path: '/Files/photos', pin: '4321' });
    const page = await fetch(`${s.url}/s/${b.token}?lang=tr`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 401);
    assert.match(await page.text(), /PIN/);
    const post = await fetch(`${s.url}/s/${b.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'pin=4321',
      redirect: 'manual',
    });
    assert.equal(post.status, 303);
    const loc = post.headers.get('location')!;
    const browse = await fetch(s.url + loc, { headers: { accept: 'text/html' } });
    assert.equal(browse.status, 200);
    assert.match(await browse.text(), /one\.txt/);
  });
});

describe('link states and public page safety', () => {
  test('revoked, expired and capped links answer a styled 404 in the visitor language; JSON for API calls', async () => {
    const b = await share({ path: '/Files/a.txt' });
    const del = await s.api('DELETE', `/api/files/share/${b.id}`, { token: admin });
    assert.equal(del.status, 200);
    assert.ok(del.body.revoked_at);
    const html = await fetch(`${s.url}/s/${b.token}`, { headers: { accept: 'text/html', 'accept-language': 'tr-TR,tr;q=0.9' } });
    assert.equal(html.status, 404);
    assert.match(await html.text(), /Bağlantı iptal edildi/);
    assert.match(html.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(html.headers.get('referrer-policy'), 'no-referrer');
    const api = await s.api('GET', `/api/files/share/${b.token}`);
    assert.equal(api.body.error, 'expired');
    const audit = (await sqlRow(s.server.db, "SELECT count(*) AS n FROM audit WHERE action IN ('share.create','share.revoke')")) as { n: number };
    assert.ok(audit.n >= 2);
  });

  test('a disabled creator revokes the link; re-enabling revives it', async () => {
    const u = await s.server.auth.users.create(DEFAULT_TENANT, { email: 'owner@example.test', password: 'owner-password-1', role: 'user' });
    const tok = await s.login('owner@example.test', 'owner-password-1');
    const b = await share({ path: '/Files/a.txt' }, tok);
    await s.server.auth.users.update(DEFAULT_TENANT, u.id, { disabled: true });
    assert.equal((await s.api('GET', `/api/files/share/${b.token}`)).body.error, 'revoked');
    await s.server.auth.users.update(DEFAULT_TENANT, u.id, { disabled: false });
    assert.equal((await s.api('GET', `/api/files/share/${b.token}`)).status, 200);
  });

  test('deleting a storage revokes its links and file requests (410 revoked, the revoked page), not 404', async () => {
    const extra = tempDir('filedock-shares-gone-');
    try {
      writeFileSync(join(extra.dir, 'f.txt'), 'soon gone');
      mkdirSync(join(extra.dir, 'in'));
      const st = await s.api('POST', '/api/admin/storages', {
        token: admin,
        body: { rbac_enabled: false, name: 'Gone', driver: 'local', config: { path: extra.dir } },
      });
      assert.equal(st.status, 200, JSON.stringify(st.body));
      const link = await share({ path: '/Gone/f.txt' });
      const dropLink = await share({ path: '/Gone/in', kind: 'drop' });
      assert.equal((await s.api('GET', `/api/files/share/${link.token}`)).status, 200);
      assert.equal((await s.api('DELETE', `/api/admin/storages/${st.body.id}`, { token: admin })).status, 200);
      const meta = await s.api('GET', `/api/files/share/${link.token}`);
      assert.deepEqual([meta.status, meta.body.error], [410, 'revoked']);
      // The page: the spec's styled 404, with the revoked sentence (not "not found").
      const page = await fetch(`${s.url}/s/${link.token}`, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 404);
      assert.match(await page.text(), /no longer available/);
      const sub = await s.api('POST', `/api/public/drop/${dropLink.token}/submissions`, { body: {} });
      assert.deepEqual([sub.status, sub.body.error], [410, 'revoked']);
      // An unknown token stays unknown.
      assert.equal((await s.api('GET', `/api/files/share/${'x'.repeat(link.token.length)}`)).status, 404);
    } finally {
      extra.cleanup();
    }
  });

  test('active content is never rendered inline; names are escaped; strict headers', async () => {
    const b = await share({ path: '/Files/page.html' });
    const r = await fetch(`${s.url}/s/${b.token}?inline=1`);
    assert.equal(r.status, 200);
    assert.doesNotMatch(r.headers.get('content-type') ?? '', /html/);
    assert.match(r.headers.get('content-disposition') ?? '', /^attachment/);
    assert.match(r.headers.get('content-security-policy') ?? '', /sandbox/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    const f = await share({ path: '/Files/photos' });
    const page = await fetch(`${s.url}/s/${f.token}`, { headers: { accept: 'text/html' } });
    const text = await page.text();
    assert.ok(!text.includes('<b>x<i>'), 'file names are escaped');
    assert.match(text, /&#60;b&#62;x&#60;i&#62;\.txt/);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'nonce-[^']+'/);
    // No admin or API surface through a link token.
    const trav = await fetch(`${s.url}/s/${f.token}/f/..%2F..%2Fa.txt`);
    assert.equal(trav.status, 404);
    assert.ok(!(await trav.text()).includes('xxxx'));
    assert.equal((await s.api('GET', '/api/auth/me', { headers: { authorization: `Bearer ${f.token}` } })).status, 401);
  });
});

describe('folder ZIP', () => {
  test('streams a valid archive, caches it once, and reports status', async () => {
    const b = await share({ path: '/Files/photos' });
    const r = await fetch(`${s.url}/s/${b.token}?zip=1`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/zip');
    const buf = Buffer.from(await r.arrayBuffer());
    const { dir, cleanup } = tempDir('filedock-zip-');
    try {
      writeFileSync(join(dir, 'x.zip'), buf);
      const skip = needTool('unzip', 'unzip');
      if (!skip) {
        const listing = execFileSync('unzip', ['-l', join(dir, 'x.zip')]).toString();
        for (const n of ['one.txt', 'two.jpg', '<b>x<i>.txt']) assert.ok(listing.includes(n), n);
        execFileSync('unzip', ['-tq', join(dir, 'x.zip')]);
      } else assert.equal(buf.readUInt32LE(0), 0x04034b50);
    } finally {
      cleanup();
    }
    let status;
    for (let i = 0; i < 100; i++) {
      status = (await s.api('GET', `/s/${b.token}?zip=status`)).body;
      if (status.state === 'ready') break;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(status.state, 'ready');
    assert.equal(readdirSync(join(s.dataDir, 'cache', 'zips')).filter((n) => n.startsWith(`${b.id}-`) && n.endsWith('.zip')).length, 1);
    const again = await fetch(`${s.url}/s/${b.token}?zip=wait`);
    assert.equal(Buffer.from(await again.arrayBuffer()).length, buf.length);
    await s.api('DELETE', `/api/files/share/${b.id}`, { token: admin });
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(readdirSync(join(s.dataDir, 'cache', 'zips')).filter((n) => n.startsWith(`${b.id}-`)).length, 0);
  });
});
