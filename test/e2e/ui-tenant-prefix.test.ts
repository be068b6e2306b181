/**
 * Multi-tenant mode in Chromium, the web app opened through a tenant's path prefix (`/t/<slug>/`, docs/tenants.md):
 * every address the app builds (routes, in-app links, API calls, the upload's XHR, raw files for previews and
 * downloads, thumbnails) stays under the prefix, so the app works in the tenant without a host name of its own.
 * Without the prefix those requests land in tenant 1, where the tenant's session is not valid.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';
import { ADMIN, ensureRendererBuilt, fileRow, launchBrowser, signedInPage, startServer, type RunningServer } from './ui-harness';
import { tempDir } from '../helpers/tools';

const BOSS = { email: 'boss@acme.test', password: 'acme-password-1' };

describe('web UI under a tenant prefix (/t/acme)', { timeout: 300_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const docs = tempDir('filedock-prefix-docs-');
  const outside: string[] = [];
  const base = () => `${srv.url}/t/acme`;

  before(async () => {
    ensureRendererBuilt();
    writeFileSync(join(docs.dir, 'note.txt'), 'hello from acme\n');
    writeFileSync(
      join(docs.dir, 'photo.png'),
      await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c03' } })
        .png()
        .toBuffer(),
    );
    srv = await startServer({ SERVICE_MULTI_TENANT: '1' });
    const post = async (path: string, body: unknown, token?: string) => {
      const r = await fetch(srv.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      const json = await r.json();
      assert.ok(r.ok, `${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    const operator = (await post('/api/auth/login', ADMIN)).token;
    await post('/api/platform/tenants', { slug: 'acme', name: 'Acme', admin: BOSS }, operator);
    const boss = (await post('/t/acme/api/auth/login', BOSS)).token;
    await post('/t/acme/api/admin/storages', { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: docs.dir } }, boss);
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, base(), BOSS));
    // Every same-origin request the app makes, but the shell's static assets: each must carry the prefix.
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin === srv.url && !u.pathname.startsWith('/t/acme/') && !u.pathname.startsWith('/assets/')) outside.push(`${r.method()} ${u.pathname}`);
    });
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    docs.cleanup();
  });

  test('signed in through the prefix, the app browses, previews, uploads and downloads in the tenant', async () => {
    assert.match(new URL(page.url()).pathname, /^\/t\/acme\//, page.url());
    // The sidebar's storage link is an in-app link under the prefix.
    const docsLink = page.getByRole('link', { name: 'Docs' }).first();
    assert.equal(await docsLink.getAttribute('href'), '/t/acme/files/Docs');
    await docsLink.click();
    await page.waitForURL(`${base()}/files/Docs`);
    await fileRow(page, 'note.txt').waitFor();

    await fileRow(page, 'note.txt').dblclick();
    await page.getByTestId('preview').getByText('hello from acme').waitFor();
    await page.keyboard.press('Escape');

    await fileRow(page, 'photo.png').dblclick();
    const img = page.getByTestId('preview').locator('img').first();
    await img.waitFor();
    await page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth === 64, await img.elementHandle());
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('dialog').getByRole('link', { name: 'Download' }).click()]);
    assert.deepEqual(readFileSync((await dl.path())!), readFileSync(join(docs.dir, 'photo.png')), 'the download is the file');
    await page.keyboard.press('Escape');

    const local = join(docs.dir, '..', `${new URL(srv.url).port}-up.txt`);
    writeFileSync(local, 'uploaded through the prefix');
    await page.locator('input[type=file][multiple]').setInputFiles(local);
    await fileRow(page, `${new URL(srv.url).port}-up.txt`).waitFor({ timeout: 30_000 });
    assert.equal(readFileSync(join(docs.dir, `${new URL(srv.url).port}-up.txt`), 'utf8'), 'uploaded through the prefix');

    // The breadcrumb's root is an in-app link under the prefix too.
    await page
      .getByRole('navigation', { name: /breadcrumb|path/i })
      .getByRole('link')
      .first()
      .click();
    await page.waitForURL(`${base()}/files`);

    assert.deepEqual(outside, [], 'no request left the prefix');
    assert.deepEqual(errors, []);
  });
});
