/**
 * A language pack installed from the store's catalogue in the web UI (issue 33;
 * docs/app-store.md, "Web UI" and "Language packs"), in Chromium against a real
 * server and the example store served on loopback: the German pack's entry
 * speaks of a language (its name and how much it translates), "Install
 * language" installs it, Deutsch is picked in the language menu and the UI is
 * German (screenshot); the store publishes 1.1 and the update check rings the
 * bell: the Apps tab's count and the entry's badge show it without a reload;
 * "Sprache entfernen" removes the language.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { needTool, tempDir } from '../helpers/tools';
import { closeAll, serveStoreFolder } from '../helpers/static-store';
import { buildExampleStore, GERMAN_PACK_DIR, languagePack } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore } from '../../server/store';
import { ADMIN, bearerApi, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('a language pack from the store catalogue, in the browser', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let errors: string[];
  let site: string;
  let token = '';
  const servers: Server[] = [];
  const tmp = tempDir('filedock-ui-store-lang-');
  const storeKey = generateKeyPairSync('ed25519').privateKey;
  const api = bearerApi(
    () => srv.url,
    () => token,
  );
  const languages = async () =>
    (await api('GET', '/api/i18n/languages')).body.languages.map((l: { id: string; version?: string }) => `${l.id}:${l.version ?? ''}`);

  before(async () => {
    ensureRendererBuilt();
    site = tmp.dir;
    await buildExampleStore(site, generateKeyPairSync('ed25519').privateKey, storeKey);
    const storeUrl = await serveStoreFolder(servers, site);
    srv = await startServer();
    const r = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = (await r.json()).token;
    const connected = await api('POST', '/api/admin/app-store/stores', { url: storeUrl, public_key_pem: publicPem(storeKey) });
    assert.equal(connected.status, 201, JSON.stringify(connected.body));
    browser = await launchBrowser();
    ({ ctx, page, errors } = await signedInPage(browser, srv.url));
  });
  after(async () => {
    await ctx?.close();
    await browser?.close();
    await srv?.stop();
    closeAll(servers);
    tmp.cleanup();
  });

  test('the German pack: its language and completeness shown, "Install language", then the UI in German', async () => {
    await page.goto(`${srv.url}/admin/apps/store`);
    await page.getByLabel('Kind').selectOption('language-pack');
    const entry = page.getByTestId('entry-de');
    await entry.getByText('Language pack', { exact: true }).waitFor();
    // The example pack translates every English key: the store measured it at build.
    assert.equal(await entry.getByTestId('language-facts').innerText(), 'Language: Deutsch · 100 % of the interface translated');
    await shot(page, 'ui-store-language-entry');
    await entry.getByRole('button', { name: 'Install the language Deutsch' }).click();
    await entry.getByTestId('installed-version').getByText('Installed: 1.0.0').waitFor();
    await page.getByText('Deutsch 1.0.0 installed: pick it in the language menu.').waitFor();
    assert.deepEqual(await languages(), ['en:', 'tr:', 'de:1.0.0']);
    // Offered by the menu of the page already open (it asks for the languages as it opens).
    const menu = page.getByRole('combobox', { name: 'Language' });
    await menu.focus();
    await page.getByRole('option', { name: 'Deutsch' }).waitFor({ state: 'attached' });
    await menu.selectOption('de');
    await entry.getByRole('button', { name: 'Sprache Deutsch entfernen' }).waitFor();
    await entry.getByTestId('language-facts').getByText('Sprache: Deutsch · 100 % der Oberfläche übersetzt').waitFor();
    assert.equal(await page.locator('html').getAttribute('lang'), 'de');
    await shot(page, 'ui-store-language-de');
  });

  test('the store publishes 1.1: the bell rings and the Apps tab counts the update without a reload', async () => {
    assert.equal(await page.getByTestId('apps-updates').count(), 0);
    const { file, bytes } = languagePack(GERMAN_PACK_DIR, { version: '1.1.0' });
    writeFileSync(join(site, file), bytes);
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    // Refreshed through the API, not the page (the refresh runs the update check): only the bell's realtime frame can tell the page.
    const stores = (await api('GET', '/api/admin/app-store/stores')).body.stores;
    assert.equal((await api('POST', `/api/admin/app-store/stores/${stores[0].id}/refresh`)).status, 200);
    await page.getByTestId('apps-updates').getByText('1', { exact: true }).waitFor();
    // The catalogue on screen read itself again: the entry has its badge and its upgrade button.
    const entry = page.getByTestId('entry-de');
    await entry.getByTestId('update-badge').waitFor();
    await entry.getByRole('button', { name: 'Sprache Deutsch auf 1.1.0 aktualisieren' }).waitFor();
    const rung = (await api('GET', '/api/notifications?limit=50')).body.notifications.filter(
      (n: { event: string }) => n.event === 'app_store.update_available',
    );
    assert.deepEqual(
      rung.map((n: { data: Record<string, unknown> }) => [n.data.app_id, n.data.kind, n.data.version, n.data.held]),
      [['de', 'language-pack', '1.1.0', 'manual']],
    );
    await shot(page, 'ui-store-language-update');
  });

  test('"Sprache entfernen" removes the language (confirmed)', async () => {
    const entry = page.getByTestId('entry-de');
    await entry.getByRole('button', { name: 'Sprache Deutsch entfernen' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Sprache entfernen' }).click();
    await page.getByText('Die Sprache Deutsch ist entfernt.').waitFor();
    assert.deepEqual(await languages(), ['en:', 'tr:']);
    assert.deepEqual(
      errors.filter((e) => !/status of 401\b/.test(e)),
      [],
    );
  });
});
