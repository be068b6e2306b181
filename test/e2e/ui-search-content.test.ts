/**
 * Search inside documents in the web UI (issue 34): a PDF written to the storage on disk is found by a word
 * only its text holds, and the result row shows the snippet under the name with the hit in a `<mark>`,
 * the document's markup-looking text shown as text. A real server from source, Debian's Chromium and
 * poppler's pdftotext.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { docxWith, pdfWith } from '../helpers/documents';
import { ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? needTool('pdftotext', 'poppler-utils') ?? undefined;

describe('web UI: search inside documents', { skip, timeout: 120_000 }, () => {
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

  test('a word inside a PDF is found; the snippet shows under the name with the hit marked', async () => {
    writeFileSync(join(srv.dataDir, 'invoice-march.pdf'), pdfWith(['Invoice 42 for <b>garden</b> work', 'paid by the aardvark society']));
    await page.goto(`${srv.url}/files/home`);
    await page
      .getByTestId('file-list')
      .getByRole('option', { name: /invoice-march\.pdf/ })
      .waitFor();
    // The sync found it when the folder opened; its text comes from the background extraction.
    const until = Date.now() + 20_000;
    for (;;) {
      const n = await page.evaluate(async () => (await (await fetch('/api/files/search?q=aardvark')).json()).total);
      if (n === 1) break;
      assert.ok(Date.now() < until, 'the PDF text was indexed');
      await new Promise((r) => setTimeout(r, 200));
    }
    await page.keyboard.press('/');
    await page.keyboard.type('aardvark');
    await page.keyboard.press('Enter');
    const hit = page.getByTestId('file-list').getByRole('option', { name: /invoice-march\.pdf/ });
    await hit.waitFor();
    assert.equal(await hit.locator('.snippet mark').innerText(), 'aardvark');
    assert.match(await hit.locator('.snippet').innerText(), /<b>garden<\/b> work paid by the aardvark society/);
    assert.equal(await hit.locator('.snippet b').count(), 0, 'the text is not markup');
    await shot(page, 'search-content');

    // A docx with the same word; then the kind filter narrows to PDFs, its chip says so, and removing the chip widens again.
    writeFileSync(join(srv.dataDir, 'aardvark-notes-draft.docx'), await docxWith(['Minutes: the aardvark society met']));
    await page
      .getByRole('button', { name: 'Refresh' })
      .click()
      .catch(() => undefined);
    for (const end = Date.now() + 20_000; ; ) {
      const n = await page.evaluate(async () => (await (await fetch('/api/files/search?q=society')).json()).total);
      if (n === 2) break;
      assert.ok(Date.now() < end, 'the docx text was indexed');
      await new Promise((r) => setTimeout(r, 200));
    }
    const list = page.getByTestId('file-list');
    const search = page.getByRole('combobox', { name: 'Search' });
    await search.fill('society');
    await search.press('Enter');
    await list.getByRole('option', { name: /aardvark-notes-draft\.docx/ }).waitFor();
    await list.getByRole('option', { name: /invoice-march\.pdf/ }).waitFor();
    await page.getByRole('button', { name: 'Filters' }).click();
    await page.getByLabel('Kind').selectOption({ label: 'PDFs' });
    await page.getByRole('button', { name: 'Apply' }).click();
    const chips = page.getByRole('list', { name: 'Filters in effect' });
    await chips.getByText('PDFs').waitFor();
    await list.getByRole('option', { name: /aardvark-notes-draft\.docx/ }).waitFor({ state: 'detached' });
    assert.equal(await list.getByRole('option', { name: /invoice-march\.pdf/ }).count(), 1, 'the PDF stays');
    await shot(page, 'search-chips');
    await chips.getByRole('button', { name: 'Remove filter: PDFs' }).click();
    await list.getByRole('option', { name: /aardvark-notes-draft\.docx/ }).waitFor();
    assert.equal(await chips.count(), 0, 'no chips without filters');
    // The recent searches are offered by the box, newest first.
    assert.deepEqual(await page.locator('#search-recent option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)), ['society', 'aardvark']);
    // Chromium logs the signed-out checks before sign-in (401) as console errors.
    assert.deepEqual(
      errors.filter((e) => !/status of 401\b/.test(e)),
      [],
    );
  });
});
