/**
 * The app page's Content-Security-Policy in Debian's Chromium against a real
 * server: the main pages load and work with no policy violation (sign-in, the
 * file list, previews of an image, a markdown table and a PDF, the share
 * dialog with its QR code, admin settings), and the theme is applied before
 * first paint by /theme.js now that inline script is refused.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { PDFDocument } from 'pdf-lib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, desktopContext, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
/** What the policy refused: Chromium's console report and the page's own violation events. */
const violations = (errors: string[]) => errors.filter((e) => /Content Security Policy|csp-violation/i.test(e));

describe('web UI under its Content-Security-Policy', { skip, timeout: 300_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let errors: string[];

  /** A context whose pages report every policy violation to the console, and start in the dark theme. */
  const watched = async (c: BrowserContext) => {
    await c.addInitScript(() => {
      localStorage.setItem('filedock.theme', 'dark');
      document.addEventListener('securitypolicyviolation', (e) => console.error(`csp-violation ${e.effectiveDirective} ${e.blockedURI}`));
    });
    return newPage(c);
  };

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    writeFileSync(
      join(srv.dataDir, 'photo.png'),
      await sharp({ create: { width: 320, height: 200, channels: 3, background: '#3a7bd5' } })
        .png()
        .toBuffer(),
    );
    writeFileSync(join(srv.dataDir, 'notes.md'), '# Notes\n\n| left | right |\n|:-----|------:|\n| a | 1 |\n| b | 2 |\n');
    const pdf = await PDFDocument.create();
    pdf.addPage([300, 200]).drawText('Filedock', { x: 40, y: 100, size: 24 });
    writeFileSync(join(srv.dataDir, 'report.pdf'), await pdf.save());
    browser = await launchBrowser();
    ctx = await desktopContext(browser);
    ({ page, errors } = await watched(ctx));
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('sign-in page: the policy is sent, the theme script ran before paint, nothing refused', async () => {
    const res = await page.goto(`${srv.url}/files`);
    const csp = res!.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
    assert.equal(res!.headers()['cross-origin-opener-policy'], 'same-origin');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await signIn(page, srv.url);
    assert.deepEqual(violations(errors), []);
  });

  test('file list and previews (image, markdown table, PDF): nothing refused', async () => {
    await page.goto(`${srv.url}/files/home`);
    const list = page.getByTestId('file-list');
    await list.getByRole('option', { name: /photo\.png/ }).waitFor();
    await list.getByRole('option', { name: /photo\.png/ }).dblclick();
    const preview = page.getByTestId('preview');
    await preview.locator('img').first().waitFor();
    assert.ok(
      await preview
        .locator('img')
        .first()
        .evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
      'the image loaded',
    );
    await page.keyboard.press('Escape');
    await list.getByRole('option', { name: /notes\.md/ }).dblclick();
    await preview.getByTestId('markdown').locator('table').waitFor();
    await page.keyboard.press('Escape');
    await list.getByRole('option', { name: /report\.pdf/ }).dblclick();
    await preview.waitFor();
    await page.keyboard.press('Escape');
    await shot(page, 'ui-csp-files-desktop');
    assert.deepEqual(violations(errors), []);
  });

  test('share dialog with its QR code: nothing refused', async () => {
    const list = page.getByTestId('file-list');
    await list.getByRole('option', { name: /notes\.md/ }).click();
    await page.getByRole('button', { name: 'Share link…' }).click();
    const dlg = page.getByRole('dialog');
    await dlg.getByRole('button', { name: 'Create link' }).click();
    await dlg.getByRole('img', { name: 'QR code of the link' }).waitFor();
    await page.keyboard.press('Escape');
    assert.deepEqual(violations(errors), []);
  });

  test('admin settings: nothing refused', async () => {
    await page.goto(`${srv.url}/admin/settings`);
    await page.getByRole('heading').first().waitFor();
    await page.waitForLoadState('networkidle');
    assert.deepEqual(violations(errors), []);
  });

  test('phone: the file list in the dark theme, nothing refused', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true });
    try {
      const { page: ph, errors: phErrors } = await watched(phone);
      await signIn(ph, srv.url);
      await ph.goto(`${srv.url}/files/home`);
      await ph
        .getByTestId('file-list')
        .getByRole('option', { name: /photo\.png/ })
        .waitFor();
      assert.equal(await ph.evaluate(() => document.documentElement.dataset.theme), 'dark');
      await shot(ph, 'ui-csp-files-phone');
      assert.deepEqual(violations(phErrors), []);
    } finally {
      await phone.close();
    }
  });
});
