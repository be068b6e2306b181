/**
 * Admin → Settings → Metrics in Chromium: switched on, the scrape URL and the
 * token shown, the token scrapes /metrics, a new token replaces it, LAN access
 * chosen; on a desktop and a phone (390x844), and in Turkish. Real server from
 * source (docs/operations.md, "Metrics").
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('metrics settings in the browser', { skip, timeout: 180_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('switch on, show the token, scrape with it, renew it, choose the LAN; desktop and phone', async () => {
    const { ctx, page, errors } = await signedInPage(browser, srv.url);
    try {
      await page.goto(`${srv.url}/admin/settings`);
      const card = page.getByRole('region', { name: 'Metrics (Prometheus)' });
      const box = card.getByLabel('Export metrics at /metrics');
      assert.equal(await box.isChecked(), false, 'off by default');
      assert.equal((await fetch(`${srv.url}/metrics`)).status, 404);
      await box.click(); // the box follows the saved setting
      await card.getByTestId('metrics-url').getByText(`${srv.url}/metrics`).waitFor();
      await card.getByRole('button', { name: 'Show token' }).click();
      const token = (await card.getByTestId('metrics-token').textContent()) ?? '';
      assert.match(token, /^[A-Za-z0-9_-]{40,}$/);
      const scraped = await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(scraped.status, 200);
      assert.match(await scraped.text(), /filedock_http_requests_total/);
      await card.scrollIntoViewIfNeeded();
      await shot(page, 'ui-metrics');

      await card.getByRole('button', { name: 'New token' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'New token' }).click();
      await page.waitForFunction((old) => {
        const el = document.querySelector('[data-testid="metrics-token"]');
        return !!el && el.textContent !== old;
      }, token);
      const fresh = (await card.getByTestId('metrics-token').textContent()) ?? '';
      assert.equal((await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 401, 'the old token stopped working');
      assert.equal((await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${fresh}` } })).status, 200);

      await card.getByLabel('Who may scrape').selectOption('lan');
      await card.getByText('Addresses on this computer or a private network need no token; anyone else still needs it.').waitFor();
      assert.equal((await fetch(`${srv.url}/metrics`)).status, 200, 'LAN: this computer needs no token');
      assert.deepEqual(errors, [], errors.join('\n'));
    } finally {
      await ctx.close();
    }

    const phone = await signedInPage(browser, srv.url, undefined, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      await phone.page.goto(`${srv.url}/admin/settings`);
      const card = phone.page.getByRole('region', { name: 'Metrics (Prometheus)' });
      await card.getByRole('button', { name: 'Show token' }).click();
      await card.getByTestId('metrics-token').waitFor();
      await card.scrollIntoViewIfNeeded();
      await shot(phone.page, 'ui-metrics-phone');
      assert.deepEqual(phone.errors, [], phone.errors.join('\n'));
    } finally {
      await phone.ctx.close();
    }

    const tr = await signedInPage(browser, srv.url, undefined, { locale: 'tr-TR' });
    try {
      await tr.page.goto(`${srv.url}/admin/settings`);
      const card = tr.page.getByRole('region', { name: 'Ölçümler (Prometheus)' });
      assert.equal(await card.getByLabel('Ölçümleri /metrics adresinde sun').isChecked(), true);
      await card.getByText('Bu bilgisayar ve yerel ağ').waitFor({ state: 'attached' });
    } finally {
      await tr.ctx.close();
    }
  });
});
