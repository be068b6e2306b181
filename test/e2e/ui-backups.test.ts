/**
 * Backups in Chromium: Admin → Status says "No backup yet" (amber); Admin →
 * Settings → Backups takes a target, keep and schedule, "Back up now" lists
 * the archive; Status then shows the last backup's time and age, and turns
 * amber once it is older than twice the schedule's interval. Phone and
 * desktop screenshots. Real server from source.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ensureRendererBuilt, launchBrowser, newPage, shot, signedInPage, signIn, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const PHONE = { viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true } as const;

/** Clicks Save in the Backups section and waits for the server to store it. */
async function save(page: Page): Promise<void> {
  const stored = page.waitForResponse((r) => r.url().endsWith('/api/admin/backups/settings') && r.status() === 200);
  await page.getByTestId('backups-settings').getByRole('button', { name: 'Save' }).click();
  await stored;
}

describe('backups in the browser', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('no backup yet: amber on Admin → Status', async () => {
    await page.goto(`${srv.url}/admin/status`);
    const card = page.getByTestId('backup-status');
    const none = card.getByText('No backup yet');
    await none.waitFor();
    assert.equal(await none.getAttribute('class'), 'rpo-warn');
    await shot(page, 'ui-backup-status-none');
  });

  test('settings: target, keep, schedule; back up now lists the archive; Status shows its age', async () => {
    await page.goto(`${srv.url}/admin/settings`);
    const form = page.getByTestId('backups-settings');
    await form.getByLabel('Target folder').fill('/home/Backups');
    await form.getByLabel('Backups to keep').fill('3');
    await form.getByLabel('Schedule (cron, empty = off)').fill('not a cron');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/cron/i).first().waitFor();
    await form.getByLabel('Schedule (cron, empty = off)').fill('0 3 * * *');
    await save(page);
    await form.getByRole('button', { name: 'Back up now' }).click();
    await form.getByText(/^filedock-backup-.*\.zip · /).waitFor({ timeout: 60_000 });
    assert.ok(existsSync(join(srv.dataDir, 'Backups')), 'written into the storage folder');
    assert.equal(readdirSync(join(srv.dataDir, 'Backups')).filter((n) => n.endsWith('.zip')).length, 1);
    await form.scrollIntoViewIfNeeded();
    await shot(page, 'ui-backup-settings');

    await page.goto(`${srv.url}/admin/status`);
    const last = page.getByTestId('backup-status').getByText(/^Last backup .* · \/home\/Backups$/);
    await last.waitFor();
    assert.equal(await last.getAttribute('class'), null, 'fresh: not amber');
    await page.getByTestId('backup-status').scrollIntoViewIfNeeded();
    await shot(page, 'ui-backup-status');
    const ctx = await browser.newContext(PHONE);
    try {
      const { page: phone } = await newPage(ctx);
      await signIn(phone, srv.url);
      await phone.goto(`${srv.url}/admin/status`);
      await phone
        .getByTestId('backup-status')
        .getByText(/^Last backup /)
        .waitFor();
      await phone.getByTestId('backup-status').scrollIntoViewIfNeeded();
      await shot(phone, 'ui-backup-status-phone');
      await phone.goto(`${srv.url}/admin/settings`);
      await phone.getByTestId('backups-settings').scrollIntoViewIfNeeded();
      await shot(phone, 'ui-backup-settings-phone');
    } finally {
      await ctx.close();
    }
  });

  test('amber once older than twice the schedule interval', async () => {
    // Every second, but only in an hour that is not now: nothing fires, and two intervals are 2 s.
    const hour = (new Date().getHours() + 6) % 24;
    await page.goto(`${srv.url}/admin/settings`);
    const form = page.getByTestId('backups-settings');
    await form.getByLabel('Schedule (cron, empty = off)').fill(`* * ${hour} * * *`);
    await save(page);
    await page.goto(`${srv.url}/admin/status`);
    const stale = page.getByTestId('backup-status').getByText(/older than 2 seconds: check the schedule/);
    await stale.waitFor({ timeout: 30_000 });
    assert.equal(
      await page
        .getByTestId('backup-status')
        .getByText(/^Last backup /)
        .getAttribute('class'),
      'rpo-warn',
    );
    await page.getByTestId('backup-status').scrollIntoViewIfNeeded();
    await shot(page, 'ui-backup-status-stale');
    assert.deepEqual(
      errors.filter((e) => !/400/.test(e)),
      [],
      errors.join('\n'),
    );
  });
});
