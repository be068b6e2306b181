/**
 * Multi-tenant mode, the `/t/<slug>` base (docs/tenants.md, "Selecting a tenant"): the app page served through
 * a tenant's prefix names its base path (the web app's routes and API calls then carry it; without the prefix
 * the page is served as built), and a link made through the prefix carries it, also with SERVICE_PUBLIC_URL.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
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
  });
}
