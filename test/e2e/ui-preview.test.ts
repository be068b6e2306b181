// Over 60 s in CI (test-timings.json; issue 37): 5 scenarios in Chromium waiting for thumbnails of synced files.
/**
 * Opening files (issue 39 items 12, 13, 14, 18), in Debian's Chromium against
 * a real server (in process, port 0) with a storage whose files were put on
 * disk, so a sync found them:
 *   - grid tiles are never blank: the type icon until a thumbnail loads and
 *     when it fails; a loaded PDF / Word first page (white here: an empty
 *     page) is framed and carries a PDF / DOCX badge;
 *   - Open on a file without a preview (a 50 MiB .bin, a .drawio without a
 *     diagram editor) shows the info panel, never a silent download;
 *   - Escape from a preview puts focus back on the row that was opened;
 *   - an office preview's PDF viewer gets a URL ending in `<name>.pdf` and
 *     `Content-Disposition: inline; filename*=UTF-8''<name>.pdf`, not a blob UUID.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { buildTemplate } from '../../server/docserver';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { hasTool, needTool, tempDir } from '../helpers/tools';
import { ensureRendererBuilt, launchBrowser, newPage, shot, signedInPage, fileRow } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const officeTools = hasTool('soffice') && hasTool('pdftoppm');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Chromium logs refusals as console errors: the aborted thumbnail below is one on purpose. */
const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource: net::ERR_FAILED|status of 401/.test(e));

/** A valid one-page PDF with nothing on the page: its thumbnail is a white rectangle. */
function blankPdf(): Buffer {
  const objs = ['<</Type/Catalog/Pages 2 0 R>>', '<</Type/Pages/Kids[3 0 R]/Count 1>>', '<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Resources<<>>>>'];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<</Size ${objs.length + 1}/Root 1 0 R>>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

describe('web UI: opening files (tiles, info panel, focus, office PDF name)', { skip, timeout: 400_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let errors: string[];
  let root: string;
  let cleanup: () => void;
  const row = (name: string) => fileRow(page, name);
  const state = (name: string) =>
    (s.server.db.sqlite!.prepare('SELECT thumb_state FROM nodes WHERE name = ?').get(name) as { thumb_state: string | null } | undefined)?.thumb_state;
  const openFolder = async (p = page) => {
    await p.goto(`${s.url}/files/Docs`);
    await p.getByTestId('file-list').waitFor();
    await p.locator('.statusbar', { hasNotText: 'Loading' }).waitFor();
  };
  /** A phone (390x844, touch) signed in as the desktop page is, with the desktop's view choice. */
  const phoneContext = async () =>
    browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true, storageState: await ctx.storageState() });
  /** Whether the element under the centre of `sel` belongs to it (nothing covers it). */
  const onTop = (p: Page, testId: string, tileName: string) =>
    p.evaluate(
      ([id, name]) => {
        const tile = [...document.querySelectorAll('[role=option]')].find((o) => o.getAttribute('title') === name);
        const el = tile?.querySelector(`[data-testid="${id}"], .thumb > svg.ficon`);
        if (!el) return false;
        const r = el.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return !!hit && (el === hit || el.contains(hit));
      },
      [testId, tileName] as const,
    );

  before(async () => {
    ensureRendererBuilt();
    ({ dir: root, cleanup } = tempDir('filedock-ui-preview-'));
    writeFileSync(join(root, 'blank.pdf'), blankPdf());
    writeFileSync(join(root, 'letter.docx'), await buildTemplate('docx'));
    writeFileSync(join(root, 'data.bin'), Buffer.alloc(50 * 1024 * 1024, 7));
    writeFileSync(join(root, 'flow.drawio'), '<mxfile><diagram name="p">x</diagram></mxfile>');
    writeFileSync(join(root, 'notes.txt'), 'a plain note\n');
    s = await startTestServer();
    const admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Docs', driver: 'local', config: { path: root }, sync_mode: 'poll' } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    browser = await launchBrowser();
    ({ ctx, page, errors } = await signedInPage(browser, s.url, ADMIN, { acceptDownloads: true }));
  });

  after(async () => {
    await ctx?.close();
    await browser?.close();
    await s?.close();
    cleanup?.();
  });

  test('grid: PDF and Word tiles show the type icon until the thumbnail loads and when it fails, then a framed page with a badge (item 12)', async (t) => {
    if (!officeTools) {
      if (process.env.CI) assert.fail('[CI] soffice/pdftoppm not found: install libreoffice-writer-nogui poppler-utils');
      return t.skip('soffice/pdftoppm not found: install libreoffice-writer-nogui poppler-utils');
    }
    // Found on disk by the sync, not uploaded: both get first-page thumbnails on their own.
    for (let i = 0; i < 1800 && !(state('blank.pdf') === 'ready' && state('letter.docx') === 'ready'); i++) await sleep(100);
    assert.deepEqual([state('blank.pdf'), state('letter.docx')], ['ready', 'ready']);

    // Thumbnails held back: every tile shows its type icon meanwhile; the PDF's is then refused.
    const held: Route[] = [];
    const letterThumb = (u: URL) =>
      u.pathname.startsWith('/api/files/thumb/') &&
      u.pathname.endsWith(`/${(s.server.db.sqlite!.prepare('SELECT id FROM nodes WHERE name = ?').get('letter.docx') as { id: number }).id}`);
    await page.route('**/api/files/thumb/**', (r) => (letterThumb(new URL(r.request().url())) ? held.push(r) : r.abort('failed')));
    await page.evaluate(() => localStorage.setItem('filedock.view', 'grid'));
    await openFolder();
    for (let i = 0; i < 200 && held.length === 0; i++) await sleep(50);
    for (const name of ['letter.docx', 'blank.pdf', 'data.bin']) {
      assert.ok(await onTop(page, 'icon', name), `${name}: the type icon is visible while its thumbnail is not there`);
    }
    assert.equal(await row('blank.pdf').locator('[data-thumb]').getAttribute('data-thumb'), 'failed');
    assert.equal(await row('letter.docx').locator('[data-thumb]').getAttribute('data-thumb'), 'loading');
    // Let it through: the Word tile shows its (white) first page framed, with the DOCX badge on top.
    for (const r of held) await r.continue();
    await page.unroute('**/api/files/thumb/**');
    await row('letter.docx').locator('[data-thumb=loaded]').waitFor();
    assert.equal((await row('letter.docx').getByTestId('tile-badge').innerText()).trim(), 'DOCX');
    assert.ok(await onTop(page, 'tile-badge', 'letter.docx'), 'the badge is not covered by the page');

    // Reloaded without interference: both documents show their page and badge.
    await page.reload();
    await row('blank.pdf').locator('[data-thumb=loaded]').waitFor();
    await row('letter.docx').locator('[data-thumb=loaded]').waitFor();
    assert.equal((await row('blank.pdf').getByTestId('tile-badge').innerText()).trim(), 'PDF');
    assert.ok(await onTop(page, 'tile-badge', 'blank.pdf'));
    assert.ok(await onTop(page, 'icon', 'data.bin'), 'a file without a thumbnail keeps its icon');
    await shot(page, 'ui-grid-documents');

    const phone = await phoneContext();
    try {
      const { page: p } = await newPage(phone);
      await openFolder(p);
      await p.getByTestId('file-list').locator('[data-thumb=loaded]').nth(1).waitFor();
      await shot(p, 'ui-grid-documents-phone');
    } finally {
      await phone.close();
    }
    await page.evaluate(() => localStorage.setItem('filedock.view', 'list'));
    assert.deepEqual(realErrors(errors), []);
    errors.length = 0;
  });

  test('Open on a file without a preview shows the info panel, not a silent download (item 13)', async () => {
    await openFolder();
    let downloads = 0;
    page.on('download', () => downloads++);
    await row('data.bin').dblclick();
    const info = page.getByTestId('file-info');
    await info.waitFor();
    const facts = await info.locator('dl').innerText();
    assert.match(facts, /data\.bin/);
    assert.match(facts, /50(\.0)? MB/);
    assert.match(facts, /52,428,800 bytes/);
    assert.match(facts, /BIN · application\/octet-stream/);
    assert.match(facts, /Modified/);
    assert.equal(await page.getByRole('dialog').getByRole('heading').innerText(), 'About data.bin');
    assert.equal(downloads, 0, 'opening did not download');
    await shot(page, 'ui-info-panel');
    // Download is the first action and has the focus; it saves the file.
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Download');
    const [dl] = await Promise.all([page.waitForEvent('download'), info.getByRole('button', { name: 'Download' }).click()]);
    assert.equal(dl.suggestedFilename(), 'data.bin');
    await dl.cancel();
    await page.keyboard.press('Escape');

    // Show as text: a file we do not know can still be read as text.
    await row('flow.drawio').dblclick();
    await info.waitFor();
    await info.getByRole('note').filter({ hasText: 'No diagram editor is set up' }).waitFor();
    await shot(page, 'ui-info-panel-drawio');
    await info.getByRole('group', { name: 'Open with…' }).getByRole('button', { name: 'Show as text' }).click();
    await page.getByTestId('preview').getByText('<mxfile>', { exact: false }).waitFor();
    await page.keyboard.press('Escape');

    const phone = await phoneContext();
    try {
      const { page: p } = await newPage(phone);
      await openFolder(p);
      await p
        .getByTestId('file-list')
        .getByRole('option', { name: /data\.bin/ })
        .tap();
      await p.getByTestId('file-info').waitFor();
      const box = (await p.getByRole('dialog').boundingBox())!;
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `the panel fits the phone (${JSON.stringify(box)})`);
      await shot(p, 'ui-info-panel-phone');
    } finally {
      await phone.close();
    }
    assert.deepEqual(realErrors(errors), []);
  });

  test('Escape from a preview or the info panel puts focus back on the row that was opened (item 14)', async () => {
    await openFolder();
    const focus = () =>
      page.evaluate(() => {
        const a = document.activeElement;
        const id = a?.getAttribute('aria-activedescendant');
        return { role: a?.getAttribute('role') ?? a?.tagName, row: id ? document.getElementById(id)?.getAttribute('title') : null };
      });
    // Mouse: double-click a text file, Escape.
    await row('notes.txt').dblclick();
    await page.getByTestId('preview').getByText('a plain note').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    for (let i = 0; i < 100 && (await focus()).role !== 'listbox'; i++) await sleep(20);
    assert.deepEqual(await focus(), { role: 'listbox', row: 'notes.txt' });
    // Keyboard: move to another row, Enter, Escape, and the arrows go on from there.
    const focusOn = async (name: string) => {
      for (let i = 0; i < 250 && (await focus()).row !== name; i++) await sleep(20);
      assert.equal((await focus()).row, name);
    };
    await page.keyboard.press('Home');
    await focusOn('blank.pdf');
    await page.keyboard.press('ArrowDown');
    await focusOn('data.bin');
    await page.keyboard.press('Enter');
    await page.getByTestId('file-info').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    for (let i = 0; i < 100 && (await focus()).role !== 'listbox'; i++) await sleep(20);
    assert.deepEqual(await focus(), { role: 'listbox', row: 'data.bin' });
    await page.keyboard.press('ArrowDown');
    await focusOn('flow.drawio');
  });

  test("an office preview opens its PDF under the document's own name, not a blob UUID (item 18)", async (t) => {
    if (!hasTool('soffice')) {
      if (process.env.CI) assert.fail('[CI] soffice not found: install libreoffice-writer-nogui');
      return t.skip('soffice not found: install libreoffice-writer-nogui');
    }
    await openFolder();
    await row('letter.docx').dblclick();
    const frame = page.getByTestId('office-pdf');
    await frame.waitFor({ timeout: 120_000 });
    const src = new URL((await frame.getAttribute('src'))!, s.url);
    assert.equal(src.origin, s.url, 'a URL of the server, not blob:');
    assert.equal(decodeURIComponent(src.pathname.split('/').pop()!), 'letter.pdf');
    assert.equal(src.searchParams.get('path'), '/Docs/letter.docx');
    const got = await page.evaluate(async (u) => {
      const r = await fetch(u);
      return {
        status: r.status,
        type: r.headers.get('content-type'),
        disposition: r.headers.get('content-disposition'),
        head: new TextDecoder().decode((await r.arrayBuffer()).slice(0, 5)),
      };
    }, src.href);
    assert.deepEqual(got, { status: 200, type: 'application/pdf', disposition: `inline; filename="letter.pdf"; filename*=UTF-8''letter.pdf`, head: '%PDF-' });
    await page.keyboard.press('Escape');
    assert.deepEqual(realErrors(errors), []);
  });
});
