// Over 60 s in CI (test-timings.json; issue 37): axe-core audits 17 pages in Chromium, each loaded afresh until its network is idle.
/**
 * Accessibility of the main pages (issue 37): axe-core in the real Chromium on
 * the sign-in page, the file list (desktop and phone), links, trash, account,
 * every admin tab and a public link's landing page. No serious or critical
 * violation is allowed; the rest are printed for the record.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, bearerApi, desktopContext, ensureRendererBuilt, launchBrowser, newPage, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

/** The violations that fail a page: what axe rates serious or critical. */
async function audit(page: Page, name: string): Promise<string[]> {
  const r = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const minor = r.violations.filter((v) => v.impact !== 'serious' && v.impact !== 'critical');
  if (minor.length) console.log(`axe ${name}: ${minor.map((v) => `${v.id} (${v.impact}, ${v.nodes.length})`).join(', ')}`);
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${name}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(' | ')}`,
    );
}

describe('accessibility of the main pages (axe)', { skip, timeout: 300_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let token = '';
  const api = bearerApi(
    () => srv.url,
    () => token,
  );

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    mkdirSync(join(srv.dataDir, 'Photos'), { recursive: true });
    writeFileSync(join(srv.dataDir, 'notes.txt'), 'hello');
    writeFileSync(join(srv.dataDir, 'Photos', 'a.txt'), 'a');
    browser = await launchBrowser();
    const r = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = (await r.json()).token;
    assert.ok(token, 'signed in through the API');
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('the sign-in page', async () => {
    const ctx = await desktopContext(browser);
    try {
      const { page } = await newPage(ctx);
      await page.goto(`${srv.url}/files`);
      await page.getByLabel(/E-mail or username/).waitFor();
      assert.deepEqual(await audit(page, 'sign-in'), []);
    } finally {
      await ctx.close();
    }
  });

  test('files, links, trash, account and every admin tab, signed in', async () => {
    const { ctx, page } = await signedInPage(browser, srv.url);
    const found: string[] = [];
    try {
      await page.goto(`${srv.url}/files/home`);
      await page.getByTestId('file-list').getByText('notes.txt').waitFor();
      found.push(...(await audit(page, 'files')));
      for (const path of ['/links', '/trash', '/account']) {
        await page.goto(srv.url + path);
        await page.waitForLoadState('networkidle');
        found.push(...(await audit(page, path)));
      }
      for (const tab of ['storages', 'users', 'roles', 'audit', 'gateways', 'replication', 'external', 'assistant', 'apps', 'status', 'settings']) {
        await page.goto(`${srv.url}/admin/${tab}`);
        await page.waitForLoadState('networkidle');
        found.push(...(await audit(page, `admin/${tab}`)));
      }
    } finally {
      await ctx.close();
    }
    assert.deepEqual(found, [], found.join('\n'));
  });

  test('the file list on a phone', async () => {
    const { ctx, page } = await signedInPage(browser, srv.url, ADMIN, { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    try {
      await page.goto(`${srv.url}/files/home`);
      await page.getByTestId('file-list').getByText('notes.txt').waitFor();
      assert.deepEqual(await audit(page, 'files (phone)'), []);
    } finally {
      await ctx.close();
    }
  });

  test("a public link's landing page", async () => {
    const share = await api('POST', '/api/files/share', { path: 'home://notes.txt' });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    const ctx = await desktopContext(browser);
    try {
      const { page } = await newPage(ctx);
      await page.goto(`${srv.url}/s/${share.body.token}`);
      await page.waitForLoadState('networkidle');
      assert.deepEqual(await audit(page, 'public link'), []);
    } finally {
      await ctx.close();
    }
  });
});
