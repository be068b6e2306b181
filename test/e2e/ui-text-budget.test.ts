/**
 * Admin → Status in Chromium: a metered storage (s3rver) whose request budget leaves text extraction no room
 * shows "waiting for the request budget" on its line of the "Search inside documents" card, with the day's
 * count, extraction's half and the date it goes on (docs/fulltext.md, "Request budgets"). Real server from
 * source, real S3 server, Debian's Chromium.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { startS3rver, seedObjects, s3rverConfig, type S3rver } from '../helpers/s3rver';
import { ADMIN, bearerApi, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('text extraction waiting on a request budget, in the browser', { skip, timeout: 180_000 }, () => {
  let srv: RunningServer;
  let s3: S3rver;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let token = '';
  const api = bearerApi(
    () => srv.url,
    () => token,
  );

  before(async () => {
    ensureRendererBuilt();
    s3 = await startS3rver();
    srv = await startServer();
    const r = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = (await r.json()).token;
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    await s3?.close();
  });

  test('the storage line says its files wait for the request budget', async () => {
    // Created empty and given a budget of 4 (extraction's half: 2) before it holds anything: its creation and
    // syncs spend that half, so the files found next wait.
    const made = await api('POST', '/api/admin/storages', { name: 'Cloud', driver: 's3', config: s3rverConfig(s3, 'docs'), sync_mode: 'poll' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id = made.body.id as number;
    assert.equal((await api('PUT', `/api/admin/storages/${id}/meter`, { request_budget_per_day: 4 })).status, 200);
    seedObjects(
      s3,
      ['a', 'b', 'c'].map((n) => ({ key: `docs/${n}.txt`, body: `the ${n}-numbat text` })),
    );
    // "Sync now" is the admin's: never refused by the budget.
    assert.equal((await api('POST', `/api/admin/storages/${id}/sync`)).status, 202);
    let line: any;
    for (let i = 0; i < 300 && !line?.waiting_budget; i++) {
      await sleep(100);
      line = (await api('GET', '/api/admin/status')).body.text_index.storages.find((x: { storage_id: number }) => x.storage_id === id);
    }
    assert.equal(line?.pending, 3, JSON.stringify(line));
    assert.equal(line.waiting_budget.limit, 2);

    await page.goto(`${srv.url}/admin/status`);
    const card = page.getByTestId('status-text-index');
    await card.getByText('Cloud').waitFor();
    const budget = card.getByTestId('status-text-budget');
    await budget.getByText('waiting for the request budget').waitFor();
    const text = await budget.textContent();
    assert.match(text ?? '', new RegExp(`of 2, budget 4\\); it goes on ${line.waiting_budget.until} \\(UTC\\)`));
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'status-text-budget');
    assert.deepEqual(errors, []);
  });
});
