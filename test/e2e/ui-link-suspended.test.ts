/**
 * A link the uplink guard suspended shows as Suspended (with its reason) on
 * the Links page and comes back with one click on Re-enable. Real server from
 * source, Chromium (docs/desktop.md, "Uplink protection").
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, ensureRendererBuilt, launchBrowser, shot, startServer, type RunningServer, signedInPage } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('suspended link in the browser', { skip, timeout: 180_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let token: string;

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${srv.url}${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers },
    });

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer({ SERVICE_PUBLIC_LINK_MAX_ADDRESSES: '3' });
    browser = await launchBrowser();
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
    ({ token } = (await login.json()) as { token: string });
    ({ page, errors } = await signedInPage(browser, srv.url));
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('Suspended with its reason, then Re-enable makes it Active again', async () => {
    const form = new FormData();
    form.append('path', '/home');
    form.append('file', new Blob([new Uint8Array(Buffer.from('hello'))]), 'hello.txt');
    assert.equal((await fetch(`${srv.url}/api/files/upload`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${token}` } })).status, 200);
    const made = await api('POST', '/api/files/share', { path: '/home/hello.txt' });
    assert.equal(made.status, 200);
    const link = (await made.json()) as { id: number; token: string };
    const codes: number[] = [];
    // Visitors from four internet addresses through the trusted loopback proxy: over the limit of 3.
    for (let i = 1; i <= 4; i++)
      codes.push((await fetch(`${srv.url}/s/${link.token}`, { headers: { 'X-Forwarded-For': `203.0.113.${i}`, Accept: 'application/json' } })).status);
    assert.deepEqual(codes, [200, 200, 200, 423]);

    await page.goto(`${srv.url}/links`);
    const row = page.getByRole('row', { name: /hello\.txt/ });
    await row.getByText('Suspended', { exact: true }).waitFor();
    await row.getByText('Too many different visitors within an hour.').waitFor();
    await shot(page, 'links-suspended');
    await row.getByRole('button', { name: 'Re-enable' }).click();
    await row.getByText('Active', { exact: true }).waitFor();
    assert.equal(await row.getByRole('button', { name: 'Re-enable' }).count(), 0);
    const list = (await (await api('GET', '/api/files/share')).json()) as { shares: Array<{ id: number; state: string }> };
    assert.equal(list.shares.find((s) => s.id === link.id)?.state, 'active');
    assert.equal((await fetch(`${srv.url}/s/${link.token}`, { headers: { 'X-Forwarded-For': '203.0.113.50' } })).status, 200);
    // 401: the sign-in page asking who is signed in before anyone is.
    assert.deepEqual(
      errors.filter((e) => !/status of (401|423)/.test(e)),
      [],
    );
  });
});
