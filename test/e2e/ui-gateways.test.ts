/**
 * The gateways in Debian's Chromium against a real server: Admin → Gateways
 * shows WebDAV on at /dav/ and the other protocols off with their settings,
 * a WebDAV client that just signed in among the sessions, and the connection
 * instructions; Account → Sessions & keys shows "Connect with a desktop app"
 * with the WebDAV address that really answers; both in Turkish too. No
 * console errors.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('web UI: gateways', { skip, timeout: 180_000 }, () => {
  let srv: RunningServer;
  let base: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    base = srv.url;
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, base, ADMIN, { viewport: { width: 1280, height: 900 } }));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('Admin → Gateways: states, settings, a WebDAV client among the sessions, instructions', async () => {
    const dav = await fetch(`${base}/dav/`, {
      method: 'PROPFIND',
      headers: { Depth: '0', Authorization: 'Basic ' + Buffer.from(`${ADMIN.email}:${ADMIN.password}`).toString('base64') },
    });
    assert.equal(dav.status, 207);
    await page.goto(`${base}/admin/gateways`);
    await page.getByRole('heading', { name: 'Protocols' }).waitFor();
    const row = page.getByTestId('gateway-webdav');
    assert.match(await row.innerText(), /WebDAV\s+On\s+http:\/\/127\.0\.0\.1:\d+\/dav\/\s+SERVICE_WEBDAV, SERVICE_WEBDAV_ALLOW_HTTP/);
    assert.match(await page.getByTestId('gateway-sftp').innerText(), /SFTP\s+Off/);
    const sessions = page.getByRole('region', { name: 'Signed-in clients' });
    assert.match(await sessions.innerText(), new RegExp(`WebDAV\\s+${ADMIN.email.replace(/\./g, '\\.')}\\s+127\\.0\\.0\\.1`));
    const instructions = page.getByRole('region', { name: 'Connection instructions' });
    assert.equal(await instructions.getByLabel('Finder / Windows').inputValue(), `${base}/dav/`);
    assert.match(
      await instructions.getByLabel('rclone').inputValue(),
      /rclone config create filedock webdav url=http:\/\/127\.0\.0\.1:\d+\/dav vendor=other user=/,
    );
    assert.equal(await instructions.getByTestId('connect-sftp').count(), 0, 'only what listens');
    await shot(page, 'admin-gateways');
  });

  test('Account → Sessions & keys: "Connect with a desktop app" gives an address that answers; Turkish', async () => {
    await page.goto(`${base}/account/access`);
    const card = page.getByRole('region', { name: 'Connect with a desktop app' });
    await card.waitFor();
    const url = await card.getByLabel('Finder / Windows').inputValue();
    const r = await fetch(url, { method: 'OPTIONS' });
    assert.equal(r.headers.get('dav'), '1, 2');
    assert.match(await card.getByLabel('GNOME Files').inputValue(), /^dav:\/\/127\.0\.0\.1:\d+\/dav\/$/);
    assert.match(await card.innerText(), /API key/);
    await card.getByRole('button', { name: 'Copy' }).first().click();
    await card.getByRole('button', { name: 'Copied' }).waitFor();
    await shot(page, 'account-connect');
    await page.getByLabel('Language').selectOption('tr');
    await page.getByRole('region', { name: 'Masaüstü uygulamasıyla bağlan' }).waitFor();
    await page.goto(`${base}/admin/gateways`);
    await page.getByRole('heading', { name: 'Protokoller' }).waitFor();
    assert.match(await page.getByTestId('gateway-webdav').innerText(), /Açık/);
    await page.getByLabel('Dil').selectOption('en');
    await page.getByRole('heading', { name: 'Protocols' }).waitFor();
    assert.deepEqual(errors, []);
  });
});
