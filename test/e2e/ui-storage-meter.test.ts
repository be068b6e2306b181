/**
 * The meter line of the admin Storages tab in Debian's Chromium against a
 * real server and a real S3 server (s3rver): a metered storage shows today's
 * requests of its budget, the monthly estimate and the "budget spent" pill;
 * the budget is edited in place; the local storage shows no meter. In
 * Turkish too. No console errors.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { startS3rver, seedObjects, s3rverConfig, type S3rver } from '../helpers/s3rver';
import {
  ADMIN,
  ensureRendererBuilt,
  launchBrowser,
  newPage,
  shot,
  signIn,
  startServer,
  type RunningServer,
  bearerApi,
  desktopContext,
  signedInPage,
} from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('web UI: storage request meter', { skip, timeout: 120_000 }, () => {
  let srv: RunningServer;
  let s3: S3rver;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let token: string;
  let id: number;
  const api = bearerApi(
    () => srv.url,
    () => token,
  );

  before(async () => {
    ensureRendererBuilt();
    s3 = await startS3rver();
    seedObjects(s3, [{ key: 'cloud/a.txt', body: 'a' }]);
    srv = await startServer();
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = ((await login.json()) as { token: string }).token;
    const made = await api('POST', '/api/admin/storages', { name: 'Cloud', driver: 's3', config: s3rverConfig(s3, 'cloud'), sync_mode: 'poll' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    id = made.body.id;
    for (let i = 0; i < 200 && (await api('GET', `/api/admin/storages/${id}/meter`)).body.used_today < 2; i++) await sleep(50);
    assert.equal((await api('PUT', `/api/admin/storages/${id}/meter`, { request_budget_per_day: 1 })).body.exhausted, true);
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    await s3?.close();
  });

  test('requests of the budget, the estimate, the pill; the budget edited in place; Turkish', async () => {
    await page.goto(`${srv.url}/admin/storages`);
    const row = page.getByRole('row').filter({ hasText: 'Cloud' });
    const line = row.getByTestId('storage-meter');
    await line.getByText(/Requests today: \d+ of 1/).waitFor();
    await line.getByText(/est\. \$\d+\.\d{2,4}\/month/).waitFor();
    await line.getByText('Budget spent').waitFor();
    assert.equal(await page.getByRole('row').filter({ hasText: 'home' }).getByTestId('storage-meter').count(), 0, 'local is not metered');
    await shot(page, 'admin-storage-meter');
    await line.getByLabel('Daily request budget (0 = unlimited)').fill('5000');
    await line.getByRole('button', { name: 'Save' }).click();
    await line.getByText(/Requests today: \d+ of 5000/).waitFor();
    assert.equal(await line.getByText('Budget spent').count(), 0);
    assert.equal((await api('GET', `/api/admin/storages/${id}/meter`)).body.budget_per_day, 5000);
    // The signed-out first load asks who is signed in (401) before the form.
    assert.deepEqual(
      errors.filter((e) => !/status of 401/.test(e)),
      [],
    );
    const trCtx = await desktopContext(browser, { locale: 'tr-TR' });
    const { page: tr, errors: trErrors } = await newPage(trCtx);
    await signIn(tr, srv.url);
    await tr.goto(`${srv.url}/admin/storages?lang=tr`);
    const trLine = tr.getByRole('row').filter({ hasText: 'Cloud' }).getByTestId('storage-meter');
    await trLine.getByText(/Bugünkü istekler: \d+ \/ 5000/).waitFor();
    await trLine.getByLabel('Günlük istek bütçesi (0 = sınırsız)').waitFor();
    // The signed-out first load asks who is signed in (401) before the form.
    assert.deepEqual(
      trErrors.filter((e) => !/status of 401/.test(e)),
      [],
    );
  });
});
