/**
 * A paid app's licence by purchase code, in Chromium against a real server (issue 33; docs/app-store.md,
 * "Licences online"): a store served on loopback sold a licence (`issueLicence`, what `service store
 * license` writes); the admin types a wrong code (refused with the store's words), then the buyer's code
 * in the catalogue, and the app runs.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { needTool, tempDir } from '../helpers/tools';
import { closeAll, serveStoreFolder } from '../helpers/static-store';
import { buildAppPackage, publisherKey, sampleManifest } from '../helpers/app-package';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore, issueLicence } from '../../server/store';
import { ADMIN, bearerApi, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('a licence by purchase code, in the browser', { skip, timeout: 120_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let token = '';
  let code = '';
  const servers: Server[] = [];
  const cleanups: Array<() => void> = [];
  const api = bearerApi(
    () => srv.url,
    () => token,
  );

  before(async () => {
    ensureRendererBuilt();
    const t = tempDir('filedock-ui-store-licence-');
    cleanups.push(t.cleanup);
    const publisher = publisherKey('acme');
    const storeKey = generateKeyPairSync('ed25519').privateKey;
    const manifest = sampleManifest({ id: 'paid', name: 'Paid tool', filex_range: '>=0.1.0', license: { required: true, store: 'shop' } });
    writeFileSync(join(t.dir, 'paid-1.0.0.zip'), await buildAppPackage({ key: publisher, manifest }));
    await buildStore(t.dir, storeKey, { name: 'Shop' });
    code = (await issueLicence(t.dir, storeKey, { id: 'lic-ui-1', store: 'shop', app: 'paid', licensee: 'Acme Ltd' })).code;
    const storeUrl = await serveStoreFolder(servers, t.dir);
    srv = await startServer();
    const r = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = (await r.json()).token;
    for (const [path, body] of [
      ['/api/admin/app-plugins/keys', publisher.trusted],
      ['/api/admin/app-plugins/store-keys', { store: 'shop', public_key_pem: publicPem(storeKey) }],
      ['/api/admin/app-store/stores', { url: storeUrl, public_key_pem: publicPem(storeKey) }],
    ] as const) {
      const res = await api('POST', path, body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      if (path.endsWith('/stores')) assert.equal((await api('POST', '/api/admin/app-store/apps/paid/install', { store: res.body.id })).status, 201);
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('a wrong code is refused in words; the right one installs the licence and the app runs', async () => {
    const { ctx, page, errors } = await signedInPage(browser, srv.url);
    try {
      await page.goto(`${srv.url}/admin/apps/store`);
      const entry = page.getByTestId('entry-paid');
      await entry.getByText('Paid', { exact: true }).waitFor();
      const field = entry.getByLabel('Purchase code');
      await field.fill('ABCDE-FGHJK-MNPQR-STVWX');
      await entry.getByRole('button', { name: 'Get the licence of Paid tool' }).click();
      await entry
        .getByRole('alert')
        .getByText(/knows no licence of "paid"/)
        .waitFor();
      await field.fill(code.toLowerCase());
      await entry.getByRole('button', { name: 'Get the licence of Paid tool' }).click();
      await page.getByText('The licence of Paid tool is installed: the app runs.').waitFor();
      await shot(page, 'ui-store-licence');
      const app = await api('GET', '/api/admin/app-plugins/apps/paid');
      assert.deepEqual(app.body.license, { status: 'valid' });
    } finally {
      await ctx.close();
    }
    // The refused code's 409 is logged by Chromium as a failed resource; nothing else may be.
    assert.deepEqual(
      errors.filter((e) => !/status of (401|409)\b/.test(e)),
      [],
    );
  });
});
