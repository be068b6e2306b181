/**
 * A language pack from the store in the web UI (issue 33; docs/app-store.md,
 * "Language packs"), against a real server (from source, port 0) and the
 * example store served on loopback, in Debian's Chromium: the admin installs
 * the German pack (through the API), picks Deutsch in the language menu of
 * the page already open (no reload), and the UI speaks German; a reload keeps
 * it (the account's language), and so does the sign-in page after signing out.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { statSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { needTool, tempDir } from '../helpers/tools';
import { closeAll, serveStoreFolder } from '../helpers/static-store';
import { buildExampleStore } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { ADMIN, bearerApi, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('web UI: a language pack from the store', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  const servers: Server[] = [];
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let token = '';
  const tmp = tempDir('filedock-ui-langpack-');
  const api = bearerApi(
    () => srv.url,
    () => token,
  );

  before(async () => {
    ensureRendererBuilt();
    const storeKey = generateKeyPairSync('ed25519').privateKey;
    await buildExampleStore(join(tmp.dir, 'site'), generateKeyPairSync('ed25519').privateKey, storeKey);
    const storeUrl = await serveStoreFolder(servers, join(tmp.dir, 'site'));
    srv = await startServer();
    const login = await fetch(`${srv.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }),
    });
    token = (await login.json()).token;
    const connected = await api('POST', '/api/admin/app-store/stores', { url: storeUrl, public_key_pem: publicPem(storeKey) });
    assert.equal(connected.status, 201, JSON.stringify(connected.body));
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url));
    // Installed while the page is open: the menu must offer it without a reload.
    const installed = await api('POST', '/api/admin/app-store/apps/de/install', { store: connected.body.id });
    assert.equal(installed.status, 201, JSON.stringify(installed.body));
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
    closeAll(servers);
    tmp.cleanup();
  });

  test('pick Deutsch in the language menu: the UI shows German strings at once; a screenshot is kept', async () => {
    const menu = page.getByRole('combobox', { name: 'Language' });
    await menu.focus(); // the menu asks the server for its languages again as it opens
    await page.getByRole('option', { name: 'Deutsch' }).waitFor({ state: 'attached' });
    await menu.selectOption('de');
    await page.getByRole('button', { name: 'Abmelden' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Menü' });
    for (const name of ['Dateien', 'Meine Links', 'Papierkorb', 'Sicherheit', 'Verwaltung']) await nav.getByRole('link', { name }).waitFor();
    assert.equal(await page.locator('html').getAttribute('lang'), 'de');
    assert.equal(await page.getByRole('combobox', { name: 'Sprache' }).inputValue(), 'de');
    const file = join(tmp.dir, 'ui-language-pack-de.png');
    await page.screenshot({ path: file });
    assert.ok(statSync(file).size > 10_000, 'a screenshot of the German UI');
    await shot(page, 'language-pack-de');
    assert.deepEqual(errors, []);
  });

  test('the account keeps Deutsch: a reload shows German, and so does the sign-in page after signing out', async () => {
    const me = await fetch(`${srv.url}/api/auth/me`, { headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } });
    assert.equal((await me.json()).user.language, 'de');
    await page.reload();
    await page.getByRole('button', { name: 'Abmelden' }).click();
    await page.getByRole('heading', { name: 'Anmelden' }).waitFor();
    await page.getByLabel('E-Mail oder Benutzername').waitFor();
  });
});
