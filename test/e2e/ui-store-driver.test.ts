/**
 * A storage driver from the app store, in Chromium against a real server (issue 33; docs/app-store.md,
 * "Storage drivers"): the example store served on loopback offers the example driver (`http-index`);
 * the admin installs it from Admin → Apps → Store, adds a storage with it in Admin → Storages (its form
 * comes from the driver's own descriptor, the connection tested), and browses the files a second
 * loopback web server lists. No restart anywhere.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { needTool, tempDir } from '../helpers/tools';
import { closeAll, listenLoopback, serveStoreFolder, webFolder } from '../helpers/static-store';
import { buildExampleStore, EXAMPLE_PUBLISHER } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { ADMIN, bearerApi, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('a storage driver installed from the store, in the browser', { skip, timeout: 120_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let web: string;
  let token = '';
  const servers: Server[] = [];
  const cleanups: Array<() => void> = [];
  const api = bearerApi(
    () => srv.url,
    () => token,
  );

  before(async () => {
    ensureRendererBuilt();
    const t = tempDir('filedock-ui-store-driver-');
    cleanups.push(t.cleanup);
    const site = join(t.dir, 'site');
    const files = join(t.dir, 'files');
    mkdirSync(files, { recursive: true });
    writeFileSync(join(files, 'holiday-plan.txt'), 'from the web server\n');
    const publisher = generateKeyPairSync('ed25519').privateKey;
    const storeKey = generateKeyPairSync('ed25519').privateKey;
    await buildExampleStore(site, publisher, storeKey);
    const storeUrl = await serveStoreFolder(servers, site);
    web = await listenLoopback(servers, webFolder(files));
    srv = await startServer();
    const r = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = (await r.json()).token;
    const k = await api('POST', '/api/admin/app-plugins/keys', { publisher: EXAMPLE_PUBLISHER, public_key_pem: publicPem(publisher) });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    const c = await api('POST', '/api/admin/app-store/stores', { url: storeUrl, public_key_pem: publicPem(storeKey) });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('install the example driver from the store, add a storage with it, browse its files', async () => {
    const { ctx, page, errors } = await signedInPage(browser, srv.url);
    try {
      await page.goto(`${srv.url}/admin/apps/store`);
      const entry = page.getByTestId('entry-http-index');
      await entry.getByText('Version 1.0.0').waitFor();
      await entry.getByRole('button', { name: 'Install Web folder listing' }).click();
      await entry.getByTestId('installed-version').getByText('Installed: 1.0.0').waitFor();
      await shot(page, 'ui-store-driver-installed');

      await page.goto(`${srv.url}/admin/storages`);
      await page.getByRole('button', { name: 'Add storage' }).click();
      const dlg = page.getByRole('dialog');
      await dlg.getByLabel('Name *').fill('Web');
      await dlg.getByLabel('Driver').selectOption('plugin:http-index');
      await dlg.getByLabel(/Listing address/).fill(`${web}json/`);
      // The driver declares `write: false`: the storage can only be read-only.
      const readOnly = dlg.getByRole('checkbox', { name: 'Read-only' });
      assert.ok((await readOnly.isChecked()) && (await readOnly.isDisabled()), 'Read-only is ticked and cannot be unticked');
      await dlg.getByRole('button', { name: 'Test connection' }).click();
      await dlg
        .getByTestId('test-result')
        .getByText(/Connection works/)
        .waitFor();
      await shot(page, 'ui-store-driver-form');
      await dlg.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('row', { name: /Web/ }).waitFor();

      await page.goto(`${srv.url}/files/Web`);
      await page
        .getByTestId('file-list')
        .getByRole('option', { name: /holiday-plan\.txt/ })
        .waitFor();
      await shot(page, 'ui-store-driver-files');
      assert.ok(await page.locator('input[type=file]').first().isDisabled(), 'no upload into a storage that cannot be written');
      const st = (await api('GET', '/api/admin/storages')).body.storages.find((x: { name: string }) => x.name === 'Web');
      assert.deepEqual([st?.driver, st?.read_only], ['plugin:http-index', true]);
    } finally {
      await ctx.close();
    }
    // Chromium logs the signed-out checks before sign-in (401) as console errors.
    assert.deepEqual(
      errors.filter((e) => !/status of 401\b/.test(e)),
      [],
    );
  });
});
