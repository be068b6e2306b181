/**
 * The listing stays smooth with 100,000 entries. The server, sign-in and the
 * SPA are real; only the one folder's listing is answered by the test (a
 * synthetic 100,000-row folder, paged by cursor like the server) so the
 * measure is the browser's work, not a catalogue fill. Prints the numbers.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const N = 100_000;

function page(offset: number, limit: number) {
  const entries = [];
  for (let i = offset; i < Math.min(N, offset + limit); i++)
    entries.push({
      id: i + 1,
      name: `file-${String(i).padStart(6, '0')}.txt`,
      type: 'file',
      size: i * 10,
      modified: '2026-11-01T10:00:00Z',
      mime: 'text/plain',
      etag: `e${i}`,
    });
  const next = offset + limit < N ? String(offset + limit) : null;
  return { path: '/big', entries, total: N, storage: { name: 'big', driver: 'local', readonly: false }, next_cursor: next };
}

describe('virtualised listing', { skip, timeout: 120_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let p: Page;
  let errors: string[];

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    ({ page: p, errors } = await newPage(await browser.newContext({ viewport: { width: 1280, height: 800 } })));
    await p.route('**/api/files/manager?*', (route) => {
      const u = new URL(route.request().url());
      if (u.searchParams.get('path') !== '/big') return route.fallback();
      const off = Number(u.searchParams.get('cursor') ?? u.searchParams.get('offset') ?? 0);
      return route.fulfill({ json: page(off, Number(u.searchParams.get('limit') ?? 1000)) });
    });
    await signIn(p, srv.url);
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('100,000 rows: bounded DOM, smooth scrolling, keyboard to the end', async () => {
    const t0 = Date.now();
    await p.goto(`${srv.url}/files/big`);
    const list = p.getByTestId('file-list');
    await list.getByRole('option').first().waitFor();
    const firstRowsMs = Date.now() - t0;
    await p.getByText(`${N} items`).waitFor();
    await p.waitForFunction(() => !document.querySelector('.statusbar')!.textContent!.includes('Loading'), null, { timeout: 60_000 });
    const allLoadedMs = Date.now() - t0;

    const rowsInDom = await list.locator('[role=option]').count();
    assert.ok(rowsInDom > 10 && rowsInDom < 80, `rows in the DOM: ${rowsInDom}`);

    // Scroll 4 screens a frame for 240 frames and record every frame's duration.
    const frames: number[] = await p.evaluate(async () => {
      const el = document.querySelector<HTMLElement>('[data-testid=file-list]')!;
      const out: number[] = [];
      let last = performance.now();
      for (let i = 0; i < 240; i++) {
        el.scrollTop += el.clientHeight * 4;
        await new Promise((r) => requestAnimationFrame(r));
        const now = performance.now();
        out.push(now - last);
        last = now;
      }
      return out;
    });
    frames.sort((a, b) => a - b);
    const p50 = frames[Math.floor(frames.length * 0.5)];
    const p95 = frames[Math.floor(frames.length * 0.95)];
    console.log(
      `# 100k listing: first rows ${firstRowsMs} ms, all pages ${allLoadedMs} ms, DOM rows ${rowsInDom}, frame p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`,
    );
    // A non-virtualised 100k list needs seconds per frame. The bounds leave room for a loaded shared machine:
    // idle, p50 is 16.7 ms (vsync) and p95 about 31 ms; at load average 11 on 2 cores, p50 20-55 ms, p95 75-190 ms.
    assert.ok(p50 < 100, `median frame time ${p50.toFixed(1)} ms`);
    assert.ok(p95 < 500, `p95 frame time ${p95.toFixed(1)} ms`);

    await list.focus();
    await p.keyboard.press('End');
    await list.getByRole('option', { name: /file-099999\.txt/ }).waitFor();
    assert.equal(await list.getAttribute('aria-activedescendant'), 'row-file-099999_txt');
    await p.keyboard.press('Shift+ArrowUp');
    await p.keyboard.press('Shift+ArrowUp');
    await p.locator('.statusbar').getByText('3 selected').waitFor(); // the phone's selection bar (hidden here) says it too
    await shot(p, 'files-100k');
    assert.deepEqual(
      errors.filter((e) => !/status of (401|404|501)/.test(e)),
      [],
    );
  });
});
