/**
 * The app store in the web UI (issue 33; docs/app-store.md "Web UI"), in
 * Chromium against a real server: the example store (scripts/build-example-store.ts)
 * served from a temp folder on loopback. Admin → Apps → Stores connects it and
 * shows the fingerprint the server answers; the catalogue installs an example
 * app; the store publishes 1.1, a refresh shows "Update available" and the count
 * on the Apps tab, Upgrade installs it; a 1.2 that adds a permission asks for
 * approval first; a tampered index is refused in words. axe finds no serious or
 * critical violation on either page.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';
import { needTool, tempDir } from '../helpers/tools';
import { closeAll, serveStoreFolder, type HeldFiles } from '../helpers/static-store';
import { buildExampleStore, EXAMPLE_PUBLISHER, exampleRelease } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore, fingerprint } from '../../server/store';
import { ADMIN, bearerApi, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

/** Serious or critical axe violations on the page, as lines. */
async function serious(page: Page, name: string): Promise<string[]> {
  const r = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${name}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`);
}

/** Presses the store's Refresh and waits for the server's answer to it. */
async function refresh(page: Page, status: number): Promise<void> {
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/refresh') && r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Refresh Filedock example store' }).click(),
  ]);
  assert.equal(answer.status(), status);
}

describe('the app store in the browser', { skip, timeout: 300_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let site: string;
  let storeUrl: string;
  /** Packages (`.zip`) held half sent while `until` is set. */
  const held: HeldFiles = { path: /\.zip$/ };
  let token = '';
  const servers: Server[] = [];
  const cleanups: Array<() => void> = [];
  const publisher = generateKeyPairSync('ed25519').privateKey;
  const storeKey = generateKeyPairSync('ed25519').privateKey;
  const api = bearerApi(
    () => srv.url,
    () => token,
  );
  /** The store publishes another release of images-to-pdf (its manifest changed by `patch`) and signs its index again. */
  const publish = async (patch: Record<string, unknown>) => {
    const { file, bytes } = await exampleRelease('images-to-pdf', publisher, patch);
    writeFileSync(join(site, file), bytes);
    await buildStore(site, storeKey, { name: 'Filedock example store' });
  };

  before(async () => {
    ensureRendererBuilt();
    const t = tempDir('filedock-ui-store-');
    cleanups.push(t.cleanup);
    site = t.dir;
    await buildExampleStore(site, publisher, storeKey);
    // A screenshot for images-to-pdf, as a store's owner adds one (meta/<id>.json), for the details to show.
    const png = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    writeFileSync(join(site, 'media/images-to-pdf-1.png'), png);
    const meta = JSON.parse(readFileSync(join(site, 'meta/images-to-pdf.json'), 'utf8'));
    writeFileSync(
      join(site, 'meta/images-to-pdf.json'),
      JSON.stringify({ ...meta, screenshots: [{ file: 'media/images-to-pdf-1.png', caption: { en: 'Three photos become one PDF' } }] }),
    );
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    storeUrl = await serveStoreFolder(servers, site, [], held);
    srv = await startServer({ SERVICE_APP_STORE_TIMEOUT: '5s' });
    const r = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = (await r.json()).token;
    const k = await api('POST', '/api/admin/app-plugins/keys', { publisher: EXAMPLE_PUBLISHER, public_key_pem: publicPem(publisher) });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('connect, install, update available after 1.1 is published, upgrade, a new permission approved, a tampered index refused', async () => {
    const { ctx, page, errors } = await signedInPage(browser, srv.url);
    const found: string[] = [];
    try {
      // Stores: connect by address and key; the fingerprint the server answers is shown.
      await page.goto(`${srv.url}/admin/apps/stores`);
      const stores = page.getByTestId('admin-stores');
      await stores.getByText('No store is connected.', { exact: false }).waitFor();
      const add = stores.getByRole('region', { name: 'Add store' });
      await add.getByLabel('Store address').fill(storeUrl);
      await add.getByLabel('Trusted store key').fill(publicPem(storeKey));
      await add.getByRole('button', { name: 'Add store' }).click();
      const fp = fingerprint(publicPem(storeKey));
      await add.getByTestId('store-added').getByText(fp).waitFor();
      await stores.getByRole('article', { name: 'Filedock example store' }).getByTestId('store-fingerprint').getByText(fp).waitFor();
      found.push(...(await serious(page, 'admin/apps/stores')));
      await shot(page, 'ui-app-store-connected');

      // The catalogue: the example apps, details with the permissions; install one.
      await page.getByRole('navigation', { name: 'Apps sections' }).getByRole('link', { name: 'Store', exact: true }).click();
      const entry = page.getByTestId('entry-images-to-pdf');
      await entry.getByText('Version 1.0.0').waitFor();
      await page.getByTestId('entry-fill-and-sign').waitFor();
      // Its icon came through the service (the store's PNG, drawn), its categories as chips; a category filters.
      await page.waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>('[data-testid="entry-images-to-pdf"] img.store-icon');
        return !!img && img.complete && img.naturalWidth === 128;
      });
      await entry.getByRole('list', { name: 'Categories of Images to PDF' }).getByText('Documents').waitFor();
      await page.getByLabel('Category').selectOption('storage');
      await page.getByTestId('entry-http-index').waitFor();
      await entry.waitFor({ state: 'detached' });
      await page.getByLabel('Category').selectOption('');
      await entry.getByText('Version 1.0.0').waitFor();
      await entry.getByRole('button', { name: 'Details of Images to PDF' }).click();
      await entry.getByText('files.write').waitFor();
      // The screenshot the store signed, read through the service, with its caption.
      await entry.locator('figcaption').getByText('Three photos become one PDF').waitFor();
      await page.waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>('[data-testid="entry-images-to-pdf"] .store-screenshots img');
        return !!img && img.complete && img.naturalWidth === 320;
      });
      // The package is held half sent: the install is an operation whose progress the entry shows meanwhile.
      let release = () => {};
      held.until = new Promise<void>((r) => (release = r));
      await entry.getByRole('button', { name: 'Install Images to PDF' }).click();
      try {
        await entry
          .getByTestId('install-progress')
          .getByText(/\b[1-9]\d? %/)
          .waitFor();
      } finally {
        release();
        held.until = undefined;
      }
      await entry.getByTestId('installed-version').getByText('Installed: 1.0.0').waitFor();
      assert.equal((await api('GET', '/api/admin/app-plugins/apps/images-to-pdf')).body.version, '1.0.0');
      found.push(...(await serious(page, 'admin/apps/store')));

      // The store publishes 1.1; a refresh shows the update here and its count on the Apps tab.
      await publish({ version: '1.1.0' });
      await page.getByRole('link', { name: 'Stores', exact: true }).click();
      await refresh(page, 200);
      await page.getByRole('link', { name: 'Store', exact: true }).click();
      await entry.getByTestId('update-badge').getByText('Update available').waitFor();
      await page.getByTestId('apps-updates').getByText('1', { exact: true }).waitFor();
      await shot(page, 'ui-app-store-update');
      await entry.getByRole('button', { name: 'Upgrade Images to PDF to 1.1.0' }).click();
      await entry.getByText('Installed: 1.1.0').waitFor();
      await page.getByTestId('apps-updates').waitFor({ state: 'detached' });
      assert.equal((await api('GET', '/api/admin/app-plugins/apps/images-to-pdf')).body.version, '1.1.0');

      // 1.2 asks for a new permission: the admin sees it and approves before anything installs.
      await publish({ version: '1.2.0', permissions: ['files.read', 'files.write', 'ops', 'state'] });
      await page.getByRole('link', { name: 'Stores', exact: true }).click();
      await refresh(page, 200);
      await page.getByRole('link', { name: 'Store', exact: true }).click();
      await entry.getByRole('button', { name: 'Upgrade Images to PDF to 1.2.0' }).click();
      const ask = page.getByRole('dialog', { name: 'Approve new permissions' });
      await ask.getByTestId('new-permissions').getByText('state', { exact: true }).waitFor();
      assert.equal((await api('GET', '/api/admin/app-plugins/apps/images-to-pdf')).body.version, '1.1.0', 'nothing installed before the yes');
      found.push(...(await serious(page, 'approve dialog')));
      await shot(page, 'ui-app-store-approve');
      await ask.getByRole('button', { name: 'Approve and upgrade' }).click();
      await entry.getByText('Installed: 1.2.0').waitFor();
      const app = (await api('GET', '/api/admin/app-plugins/apps/images-to-pdf')).body;
      assert.deepEqual([app.version, app.permissions.includes('state')], ['1.2.0', true]);

      // "Update automatically" on the installed app: off by default; the admin's click is the server's choice.
      const auto = entry.getByRole('checkbox', { name: 'Update Images to PDF automatically' });
      assert.equal(await auto.isChecked(), false);
      await auto.click();
      await page.waitForFunction(
        () => (document.querySelector('[data-testid="entry-images-to-pdf"] [data-testid="auto-update"]') as HTMLInputElement | null)?.checked,
      );
      assert.deepEqual((await api('GET', '/api/admin/app-store/auto-updates')).body, { apps: ['images-to-pdf'] });
      found.push(...(await serious(page, 'auto-update toggle')));

      // A tampered index: the refresh is refused in words, and the catalogue says why the store is missing.
      const index = join(site, 'index.json');
      writeFileSync(index, readFileSync(index, 'utf8').replace('"Fill and sign"', '"Fill and sign!"'));
      await page.getByRole('link', { name: 'Stores', exact: true }).click();
      await refresh(page, 502);
      const refusal = page.getByRole('article', { name: 'Filedock example store' }).getByRole('alert');
      await refusal.getByText('does not match its signature', { exact: false }).waitFor();
      assert.doesNotMatch(await refusal.innerText(), /store_signature|signature_bad/, 'words, not codes');
      await shot(page, 'ui-app-store-tampered');
      await page.getByRole('link', { name: 'Store', exact: true }).click();
      await page.getByTestId('store-failed').getByText('does not match its signature', { exact: false }).waitFor();
      assert.equal(await page.getByTestId('entry-images-to-pdf').count(), 0);
    } finally {
      await ctx.close();
    }
    // The upgrade that asks (409) and the refused refresh (502) are logged by the browser as failed requests; nothing else may be.
    assert.deepEqual(
      errors.filter((e) => !/status of (409|502)/.test(e)),
      [],
    );
    assert.deepEqual(found, [], found.join('\n'));
  });
});
