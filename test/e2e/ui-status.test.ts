/**
 * Admin → Status in Chromium: the governor's lanes and CPU against the budget
 * (battery forced, so one lane and the reason shown), the public uplink
 * against its budget, storages online, the sleep inhibitor; in Turkish too.
 * Real server from source (docs/desktop.md, "Status").
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { desktopContext, ensureRendererBuilt, launchBrowser, newPage, shot, signedInPage, startServer, signIn, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('admin status in the browser', { skip, timeout: 180_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer({ SERVICE_POWER_STATE: 'battery', SERVICE_PUBLIC_EGRESS_MBPS: '8', SERVICE_BACKGROUND_CPU: '150' });
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('background work on battery, the uplink budget, storages online, nothing keeping the computer awake', async () => {
    await page.goto(`${srv.url}/admin/status`);
    const status = page.getByTestId('admin-status');
    const background = status.getByRole('region', { name: 'Background work' });
    await background.getByText('On battery: one at a time').waitFor();
    await background.getByText(/^0 of 1 lanes busy, 0 waiting$/).waitFor();
    await background.getByText(/^CPU [\d.]+ % of the 150 % budget/).waitFor();
    await status.getByRole('region', { name: 'Public links' }).getByText('Sending 0 of 8 Mbit/s to visitors').waitFor();
    await status.getByRole('region', { name: 'Storages' }).getByText('All storages are online.').waitFor();
    await status.getByRole('region', { name: 'Keeping the computer awake' }).getByText('No: nothing long is running.').waitFor();
    await status.getByRole('region', { name: 'Search inside documents' }).getByText('No documents to index yet.').waitFor();
    await status
      .getByRole('region', { name: 'Service health' })
      .getByText(/^Event loop p99 [\d.]+ ms · memory \d+ MB/)
      .waitFor();
    await shot(page, 'admin-status');
    assert.deepEqual(errors, [], errors.join('\n'));
  });

  test('the same page in Turkish', async () => {
    const ctx = await desktopContext(browser, { locale: 'tr-TR' });
    try {
      const { page: p, errors: errs } = await newPage(ctx);
      await signIn(p, srv.url);
      errs.length = 0; // as above
      await p.goto(`${srv.url}/admin/status`);
      const background = p.getByRole('region', { name: 'Arka plan işleri' });
      await background.getByText('Pilde: her seferde bir iş').waitFor();
      await p.getByText('Tüm depolamalar çevrim içi.').waitFor();
      assert.deepEqual(errs, [], errs.join('\n'));
    } finally {
      await ctx.close();
    }
  });
});
