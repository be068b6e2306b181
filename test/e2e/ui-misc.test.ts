/**
 * Smaller web UI defects of issue 39 (items 15 and 19) against a real server
 * (from source, port 0) in Debian's Chromium: a link made at 127.0.0.1 warns
 * and offers the network address; an unknown address is "Page not found"
 * without upload buttons; admin pages say sentences, not codes.
 *
 * The server listens on every address here (SERVICE_HOST 0.0.0.0) so it has
 * a network address to offer; the browser and every request stay on 127.0.0.1.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer, desktopContext } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (401|404)\b/.test(e));
/** The physical IPv4 addresses of this machine (what the server may offer). */
const lanAddresses = () =>
  Object.entries(networkInterfaces())
    .filter(([name]) => !/^(docker|br-|veth|virbr|vmnet|vboxnet|utun|tun|tap|wg|zt|tailscale|lo)/i.test(name))
    .flatMap(([, a]) => a ?? [])
    .filter((a) => a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.'))
    .map((a) => a.address);

describe('web UI: loopback links, not found, admin wording', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let errors: string[];
  const phone = () => browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true });

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer({ SERVICE_HOST: '0.0.0.0' });
    writeFileSync(join(srv.dataDir, 'report.pdf'), 'not really a pdf');
    browser = await launchBrowser();
    ctx = await desktopContext(browser);
    ({ page, errors } = await newPage(ctx));
    await signIn(page, srv.url);
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('a link made at 127.0.0.1 warns and offers the network address (15)', async () => {
    await page.goto(`${srv.url}/files/home`);
    const row = page.getByTestId('file-list').getByRole('option', { name: /report\.pdf/ });
    await row.click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Share link…' }).click();
    const dlg = page.getByRole('dialog');
    await dlg.getByRole('button', { name: 'Create link' }).click();
    const url = await dlg.getByTestId('link-result').locator('input').first().inputValue();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/s\//);
    const note = dlg.getByTestId('loopback-note');
    await note.waitFor();
    assert.match(await note.innerText(), /This link starts with 127\.0\.0\.1:\d+, which means “this computer”: nobody else can open it\./);
    const port = new URL(url).port;
    const lan = lanAddresses();
    if (lan.length > 0) {
      assert.match(await note.innerText(), /Link on your network/);
      const offered = await note.locator('input').first().inputValue();
      assert.ok(
        lan.some((a) => offered === `http://${a}:${port}${new URL(url).pathname}`),
        `${offered} is not one of ${lan.join(', ')}`,
      );
    } else {
      assert.match(await note.innerText(), /No network address of this computer was found/);
    }
    await shot(page, 'ui-share-loopback');
    await page.keyboard.press('Escape');
    const p = await phone();
    try {
      const { page: ph } = await newPage(p);
      await signIn(ph, srv.url);
      await ph.goto(`${srv.url}/files/home`);
      await ph
        .getByTestId('file-list')
        .getByRole('option', { name: /report\.pdf/ })
        .waitFor();
      // The share dialog of the phone: through the API's answer as the desktop made it, opened from the row menu.
      await ph
        .getByTestId('file-list')
        .getByRole('option', { name: /report\.pdf/ })
        .click({ button: 'right' });
      await ph.getByRole('menuitem', { name: 'Share link…' }).click();
      await ph.getByRole('dialog').getByRole('button', { name: 'Create link' }).click();
      await ph.getByTestId('loopback-note').waitFor();
      await shot(ph, 'ui-share-loopback-phone');
    } finally {
      await p.close();
    }
  });

  test('an unknown address shows "Page not found" without the file toolbar (19)', async () => {
    await page.goto(`${srv.url}/no/such/page`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    assert.match(await page.locator('main').innerText(), /There is no page at \/no\/such\/page\./);
    assert.equal(await page.getByRole('button', { name: /Upload/ }).count(), 0);
    assert.equal(await page.getByTestId('file-list').count(), 0);
    await shot(page, 'ui-not-found');
    await page.getByRole('link', { name: 'Go to your files' }).click();
    await page.getByTestId('file-list').waitFor();
    const p = await phone();
    try {
      const { page: ph } = await newPage(p);
      await signIn(ph, srv.url);
      await ph.goto(`${srv.url}/nothing-here`);
      await ph.getByRole('heading', { name: 'Page not found' }).waitFor();
      assert.equal(await ph.getByTestId('file-list').count(), 0);
      await shot(ph, 'ui-not-found-phone');
    } finally {
      await p.close();
    }
  });

  test('admin pages say sentences: audit actions, run states, antivirus, the versions box (19)', async () => {
    // Something to show: an upload in the audit log and a sync run.
    const r = await page.evaluate(
      async () =>
        (
          await fetch('/api/files/save-text', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ path: '/home/audit-me.txt', content: 'x' }),
          })
        ).status,
    );
    assert.equal(r, 200);
    await page.goto(`${srv.url}/admin/audit`);
    const audit = page.getByTestId('audit');
    await audit.waitFor();
    const text = await audit.innerText();
    assert.match(text, /Wrote a file/);
    assert.match(text, /Signed in/);
    assert.doesNotMatch(text, /file\.upload|auth\.login/);
    await shot(page, 'ui-admin-audit-words');
    await page.goto(`${srv.url}/admin/settings`);
    const status = page.getByTestId('av-status');
    await status.waitFor();
    assert.equal(await status.innerText(), 'Scanning is off: written files are not checked for viruses.');
    const modes = await page.getByLabel('Mode').locator('option').allInnerTexts();
    assert.deepEqual(modes, ['clamscan program on this computer (binary)', 'clamd service over the network or a socket (daemon)']);
    const keep = page.getByLabel('Versions kept per file (0 = unlimited)');
    assert.equal(await keep.inputValue(), '');
    assert.equal(await keep.getAttribute('placeholder'), '20');
    await page.getByText('Empty: the newest 20 of each file are kept.').waitFor();
    await page.getByRole('heading', { name: 'Antivirus' }).scrollIntoViewIfNeeded();
    await shot(page, 'ui-admin-settings-words');
    await page.goto(`${srv.url}/admin/storages`);
    const home = page.locator('tr', { hasText: 'home' }).first();
    await home.getByRole('button', { name: 'Sync now' }).click();
    await page.getByText('Sync started.').waitFor();
    for (let i = 0; i < 100; i++) {
      await home.getByRole('button', { name: 'Sync runs' }).click();
      const cell = page.getByRole('dialog').locator('tbody tr td').first();
      await cell.waitFor();
      const word = await cell.innerText();
      if (word !== 'Running' && word !== 'Queued') {
        assert.equal(word, 'Done');
        break;
      }
      await page.keyboard.press('Escape');
      await page.waitForTimeout(200);
    }
    await page.keyboard.press('Escape');
  });

  test('the upload panel folds when every upload is done; "New document" does not repeat "New text file" (19)', async () => {
    await page.goto(`${srv.url}/files/home`);
    await page.getByTestId('file-list').waitFor();
    // No document server: nothing but text to make, which is "New text file".
    assert.equal(await page.getByRole('button', { name: 'New document' }).count(), 0);
    await page.locator('input[type=file][multiple]').setInputFiles({ name: 'fold.txt', mimeType: 'text/plain', buffer: Buffer.from('folded') });
    const panel = page.getByTestId('uploads');
    // Folded only once every upload has finished.
    await panel.locator('button.panel-head[aria-expanded="false"]').waitFor();
    assert.equal(await page.evaluate(async () => (await fetch('/api/files/raw?path=/home/fold.txt')).text()), 'folded');
    const box = (await panel.boundingBox())!;
    assert.ok(box.height < 120, `the finished panel is ${box.height}px tall`);
    await panel.getByRole('button', { name: 'Clear finished' }).waitFor();
    await shot(page, 'ui-upload-folded');
  });

  test('no assistant provider: an admin is pointed to Admin → Assistant, anyone else sees nothing (19)', async () => {
    await page.goto(`${srv.url}/files/home`);
    const setup = page.getByRole('link', { name: 'Set up the assistant' });
    await setup.waitFor();
    assert.equal(await page.getByRole('button', { name: 'Assistant', exact: true }).count(), 0, 'no panel button without a provider');
    assert.match((await setup.getAttribute('title')) ?? '', /Admin → Assistant/);
    await setup.click();
    await page.waitForURL(/\/admin\/assistant$/);
    const made = await page.evaluate(
      async () =>
        (
          await fetch('/api/admin/users', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ email: 'una@example.com', username: 'una', password: 'una-pass-12345', role: 'user' }),
          })
        ).status,
    );
    assert.equal(made, 200);
    const c = await desktopContext(browser);
    try {
      const { page: una } = await newPage(c);
      await signIn(una, srv.url, { email: 'una@example.com', password: 'una-pass-12345' });
      await una.waitForLoadState('networkidle');
      assert.equal(await una.getByRole('link', { name: 'Set up the assistant' }).count(), 0);
      assert.equal(await una.getByRole('button', { name: 'Assistant', exact: true }).count(), 0);
    } finally {
      await c.close();
    }
  });

  test('no console errors', () => {
    assert.deepEqual(realErrors(errors), []);
  });
});
