/**
 * Multi-tenant mode, the `/t/<slug>` base (docs/tenants.md, "Selecting a tenant"): the app page served through
 * a tenant's prefix names its base path (the web app's routes and API calls then carry it; without the prefix
 * the page is served as built), and a link made through the prefix carries it, also with SERVICE_PUBLIC_URL.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const BOSS = { email: 'boss@base.test', password: 'base-password-1' };
const PAGE = '<!doctype html><html><head><title>app</title></head><body></body></html>';

for (const publicUrl of ['', 'https://files.example.test']) {
  describe(`tenants: the /t/<slug> base${publicUrl ? ' with SERVICE_PUBLIC_URL' : ''}`, () => {
    let s: TestServer;
    const renderer = tempDir('filedock-base-ui-');
    const root = tempDir('filedock-base-files-');

    before(async () => {
      writeFileSync(join(renderer.dir, 'index.html'), PAGE);
      writeFileSync(join(root.dir, 'a.txt'), 'a');
      s = await startTestServer({ SERVICE_MULTI_TENANT: '1', ...(publicUrl ? { SERVICE_PUBLIC_URL: publicUrl } : {}) }, { rendererDir: renderer.dir });
      const operator = await s.login();
      const made = await s.api('POST', '/api/platform/tenants', { token: operator, body: { slug: 'base', name: 'Base', admin: BOSS } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
    });
    after(async () => {
      await s.close();
      renderer.cleanup();
      root.cleanup();
    });

    test('the app page names its base only when served through the prefix', async () => {
      for (const path of ['/t/base/', '/t/base/files/S/deep']) {
        const r = await fetch(s.url + path);
        assert.equal(r.status, 200);
        assert.equal(await r.text(), PAGE.replace('<head>', '<head><meta name="filedock-base" content="/t/base">'), path);
      }
      const head = await fetch(`${s.url}/t/base/files`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(Number(head.headers.get('content-length')), Buffer.byteLength(PAGE) + '<meta name="filedock-base" content="/t/base">'.length);
      assert.equal(await (await fetch(`${s.url}/files`)).text(), PAGE, 'without the prefix: the page as built');
    });

    test("a link made through the prefix carries it; tenant 1's does not", async () => {
      const token = (await s.api('POST', '/t/base/api/auth/login', { body: BOSS })).body.token;
      const storage = { name: 'S', driver: 'local', rbac_enabled: false, config: { path: root.dir } };
      assert.equal((await s.api('POST', '/t/base/api/admin/storages', { token, body: storage })).status, 200);
      const link = await s.api('POST', '/t/base/api/files/share', { token, body: { path: '/S/a.txt' } });
      assert.equal(link.status, 200, JSON.stringify(link.body));
      assert.equal(link.body.url, `${publicUrl || s.url}/t/base/s/${link.body.token}`);
      const listed = await s.api('GET', '/t/base/api/files/share', { token });
      assert.equal(listed.body.shares[0].url, link.body.url);
      const opened = await fetch(`${s.url}/t/base/api/files/share/${link.body.token}`);
      assert.equal(opened.status, 200, 'the link answers through the prefix');
    });

    test('a public page opened through the prefix keeps its own links, its PIN form and its drop API in the tenant', async () => {
      const token = (await s.api('POST', '/t/base/api/auth/login', { body: BOSS })).body.token;
      mkdirSync(join(root.dir, 'sub', 'in'), { recursive: true });
      writeFileSync(join(root.dir, 'sub', 'b.txt'), 'b');
      const storage = { name: 'P', driver: 'local', rbac_enabled: false, config: { path: root.dir } };
      assert.equal((await s.api('POST', '/t/base/api/admin/storages', { token, body: storage })).status, 200);
      const make = async (body: Record<string, unknown>) => {
        const r = await s.api('POST', '/t/base/api/files/share', { token, body });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body as { token: string; pin?: string };
      };
      const html = { accept: 'text/html' };
      const addresses = (page: string) => [...page.matchAll(/\b(?:href|src|action|data-api|data-download)="([^"]*)"/g)].map((m) => m[1]);

      assert.equal((await s.api('POST', '/t/base/api/files/refresh', { token, body: { path: '/P/sub' } })).status, 200);
      const folder = await make({ path: '/P/sub' });
      const browse = await (await fetch(`${s.url}/t/base/s/${folder.token}`, { headers: html })).text();
      const links = addresses(browse);
      assert.ok(
        links.some((a) => a.startsWith(`/t/base/s/${folder.token}/f/`)),
        links.join(' '),
      );
      assert.deepEqual(
        links.filter((a) => a.startsWith('/') && !a.startsWith('/t/base/')),
        [],
        'no address leaves the prefix',
      );
      const file = links.find((a) => a.includes('b.txt'))!;
      assert.equal(await (await fetch(s.url + file.replaceAll('&amp;', '&'))).text(), 'b', 'its file link downloads in the tenant');

      const pinned = await make({ path: '/P/a.txt', password: true });
      const form = await (await fetch(`${s.url}/t/base/s/${pinned.token}`, { headers: html })).text();
      assert.ok(addresses(form).includes(`/t/base/s/${pinned.token}`), 'the PIN form posts through the prefix');
      const posted = await fetch(`${s.url}/t/base/s/${pinned.token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...html },
        body: `pin=${pinned.pin}`,
        redirect: 'manual',
      });
      assert.equal(posted.status, 303);
      assert.match(posted.headers.get('location')!, new RegExp(`^/t/base/s/${pinned.token}\\?dt=`));

      const drop = await make({ path: '/P/sub/in', kind: 'drop' });
      const dropPage = await (await fetch(`${s.url}/t/base/d/${drop.token}`, { headers: html })).text();
      const api = addresses(dropPage).find((a) => a.includes('/api/public/drop/'))!;
      assert.equal(api, `/t/base/api/public/drop/${drop.token}`);
      const opened = await fetch(`${s.url}${api}/submissions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"note":""}' });
      assert.equal(opened.status, 200, 'the drop API answers the script through the prefix');
      assert.ok((await opened.json()).submission_id);
      const root1 = await fetch(`${s.url}/api/public/drop/${drop.token}/submissions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"note":""}',
      });
      assert.equal(root1.status, 404, 'without the prefix the token is not found (tenant 1): what the page used to call');
    });
  });
}
