// Over 60 s in CI (test-timings.json; issue 37): 5 scenarios in Chromium in fresh contexts, thumbnails included.
/**
 * What a stranger's browser shows for a file link without a PIN (issue 39,
 * item 1): the landing page (name, size, thumbnail, Download button) that
 * counts nothing, its Download counting once; the dead-link page of each
 * reason (item 16); and the owner's "Uses" of a file request (item 7), on a
 * phone (390x844) and a desktop. Real server from source, Chromium.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, ensureRendererBuilt, launchBrowser, newPage, shot, startServer, type RunningServer, signedInPage } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
  locale: 'en-US',
  acceptDownloads: true,
};
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 }, locale: 'en-US', acceptDownloads: true };
const SIZES = { phone: PHONE, desktop: DESKTOP } as const;

describe('file link landing page and dead-link reasons in the browser', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let token: string;
  let photo: Buffer;
  const errors: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${srv.url}${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const upload = async (folder: string, name: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('path', folder);
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    const r = await fetch(`${srv.url}/api/files/upload`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200, await r.text());
  };
  const link = async (body: Record<string, unknown>) => {
    const r = await api('POST', '/api/files/share', body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { id: number; token: string; url: string };
  };
  const downloads = async (id: number) =>
    ((await api('GET', '/api/files/share')).body.shares as Array<{ id: number; downloads: number }>).find((s) => s.id === id)!.downloads;
  /** A stranger's browser of `size`: its own context, no cookies. */
  const stranger = async (size: keyof typeof SIZES, locale = 'en-US'): Promise<Page> => {
    const ctx = await browser.newContext({ ...SIZES[size], locale });
    assert.deepEqual(await ctx.cookies(), []);
    const { page, errors: e } = await newPage(ctx);
    page.on('close', () => errors.push(...e.filter((x) => !/status of (401|404)/.test(x))));
    return page;
  };

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
    ({ token } = (await login.json()) as { token: string });
    photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#2f7ae0' } })
      .composite([
        {
          input: Buffer.from(
            '<svg width="1200" height="800"><circle cx="850" cy="300" r="160" fill="#ffd35a"/><rect y="560" width="1200" height="240" fill="#2c6e3f"/></svg>',
          ),
        },
      ])
      .jpeg()
      .toBuffer();
    assert.equal((await api('POST', '/api/files/mkdir', { path: '/home/requests' })).status, 200);
    await upload('/home', 'Holiday by the lake.jpg', photo);
    // The landing page shows the thumbnail once the thumbnail job made it: wait (bounded) for it on a probe link.
    const probe = await link({ path: '/home/Holiday by the lake.jpg' });
    for (let i = 0; i < 400 && !(await (await fetch(probe.url, { headers: { accept: 'text/html' } })).text()).includes('class="pv"'); i++)
      await new Promise((r) => setTimeout(r, 50));
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('a browser lands on the file page (counts nothing), and its Download button downloads once', async () => {
    const l = await link({ path: '/home/Holiday by the lake.jpg', max_downloads: 1 });
    for (const size of ['phone', 'desktop'] as const) {
      const page = await stranger(size);
      const res = await page.goto(l.url);
      assert.equal(res!.status(), 200);
      await page.getByRole('heading', { name: 'Holiday by the lake.jpg' }).waitFor();
      await page.getByText(/Size: \d/).waitFor();
      await page.getByText('1 download left').first().waitFor();
      // The thumbnail is an image that loaded (not a broken <img>), when one was made.
      await page.waitForFunction(() => ((document.querySelector('img.pv') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0, undefined, { timeout: 20_000 });
      await shot(page, `ui-link-landing-${size}`);
      await page.close();
    }
    assert.equal(await downloads(l.id), 0, 'the pages counted nothing');

    const page = await stranger('desktop');
    await page.goto(l.url);
    const dl = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download' }).click();
    const got = await dl;
    assert.equal(got.suggestedFilename(), 'Holiday by the lake.jpg');
    assert.ok(readFileSync((await got.path())!).equals(photo), 'byte-exact');
    assert.equal(await downloads(l.id), 1);
    // Reloading now shows that the link is used up.
    const res = await page.goto(l.url);
    assert.equal(res!.status(), 404);
    await page.getByRole('heading', { name: 'Link used up' }).waitFor();
    await page.close();
  });

  test('dead links say why: revoked, expired, used up, a full file request, unknown (phone and desktop)', async () => {
    const revoked = await link({ path: '/home/Holiday by the lake.jpg' });
    assert.equal((await api('DELETE', `/api/files/share/${revoked.id}`)).status, 200);
    const expired = await link({ path: '/home/Holiday by the lake.jpg', ttl: '2s' });
    const used = await link({ path: '/home/Holiday by the lake.jpg', max_downloads: 1 });
    assert.equal((await fetch(used.url)).status, 200); // a curl-like client takes the one download
    const full = await link({ path: '/home/requests', kind: 'drop', max_uploads: 1 });
    const form = new FormData();
    form.append('files', new Blob(['hello']), 'hello.txt');
    assert.equal((await fetch(full.url, { method: 'POST', body: form, headers: { accept: 'text/html' } })).status, 200);
    // Wait (bounded) for the 2 s expiry.
    for (let i = 0; i < 100 && (await fetch(`${srv.url}/api/files/share/${expired.token}`)).status !== 410; i++) await new Promise((r) => setTimeout(r, 100));

    const cases = [
      ['revoked', revoked.url, 'Link revoked', 'This link has been revoked and is no longer available.'],
      ['expired', expired.url, 'Link expired', 'This link has expired.'],
      ['used-up', used.url, 'Link used up', 'This link has been used up: all the downloads it allowed have been made.'],
      ['request-full', full.url, 'File request full', 'This file request is full: it accepts no more files.'],
      ['unknown', `${srv.url}/s/${'x'.repeat(32)}`, 'Link not available', 'There is nothing at this address. The link may be mistyped or removed.'],
    ] as const;
    for (const size of ['phone', 'desktop'] as const) {
      const page = await stranger(size);
      for (const [name, url, heading, sentence] of cases) {
        const res = await page.goto(url);
        assert.equal(res!.status(), 404, name);
        await page.getByRole('heading', { name: heading }).waitFor();
        await page.getByText(sentence).waitFor();
        assert.ok(!(await page.locator('main').innerText()).includes('Holiday'), 'nothing about the file');
        await shot(page, `ui-dead-link-${name}-${size}`);
      }
      await page.close();
    }
    // Turkish: the reason in the visitor's language.
    const tr = await stranger('phone', 'tr-TR');
    await tr.goto(revoked.url);
    await tr.getByRole('heading', { name: 'Bağlantı iptal edildi' }).waitFor();
    await tr.goto(used.url);
    await tr.getByRole('heading', { name: 'Bağlantı tükendi' }).waitFor();
    await tr.close();
  });

  test("My links: a file request's uses are its submissions, with the files received against the cap", async () => {
    const d = await link({ path: '/home/requests', kind: 'drop', max_uploads: 10 });
    for (const names of [['a.txt', 'b.txt'], ['c.txt']]) {
      const form = new FormData();
      for (const n of names) form.append('files', new Blob([n]), n);
      assert.equal((await fetch(d.url, { method: 'POST', body: form, headers: { accept: 'text/html' } })).status, 200);
    }
    for (const size of ['phone', 'desktop'] as const) {
      const { ctx, page } = await signedInPage(browser, srv.url, ADMIN, SIZES[size]);
      await page.goto(`${srv.url}/links`);
      const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: '3 of 10 files received' }) });
      await row.waitFor();
      assert.match(await row.innerText(), /File request\s+2\s*3 of 10 files received/);
      await shot(page, `ui-links-request-uses-${size}`);
      await ctx.close();
    }
  });

  test('no console errors apart from the statuses the tests cause', () => {
    assert.deepEqual(errors, []);
  });
});
