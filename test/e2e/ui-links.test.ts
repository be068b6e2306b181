// Over 60 s in CI (test-timings.json; issue 37): 8 scenarios in Chromium with fresh browser contexts per stranger and chunked uploads.
/**
 * Public links end to end: links made in the file manager's dialogs, opened by
 * strangers in fresh browser contexts (no cookies) against a real server from
 * source on port 0. Share download with and without a PIN, a folder's browse
 * page and its ZIP, a file request uploaded through its page in chunks, a
 * non-admin user kept out of the admin console, and the pages in Turkish.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import yauzl from 'yauzl';
import type { Browser, Download, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer, signedInPage } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

/** Drop chunks of 1 MiB (the server's smallest ceiling), so a 2.5 MiB file crosses three parts. */
const CHUNK = 1 << 20;
/** Longer than the old page's three quick retries (1 + 2 + 3 s). */
const OFFLINE_MS = 7000;

const carol = { email: 'carol@example.com', password: 'carol-pass-1234' };

/** Every entry of a ZIP archive with its bytes; rejects when the archive is not valid. */
function unzip(buf: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(e, (er, s) => {
          if (er || !s) return reject(er);
          const parts: Buffer[] = [];
          s.on('data', (c: Buffer) => parts.push(c));
          s.on('error', reject);
          s.on('end', () => {
            out.set(e.fileName, Buffer.concat(parts));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/** Chromium logs the PIN form's 401, the dead link's 404 and the injected network faults. */
const realErrors = (errors: string[]) =>
  errors.filter(
    (e) => !/Failed to load resource: (the server responded with a status of (401|403|404|507)|net::ERR_(CONNECTION_RESET|INTERNET_DISCONNECTED))/.test(e),
  );

const bytesOf = async (d: Download): Promise<Buffer> => readFileSync((await d.path())!);

describe('public links in the browser', { skip, timeout: 180_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let admin: Page;
  let adminErrors: string[];
  let token: string;
  const visitorErrors: string[][] = [];
  const links: { file?: string; pinned?: string; pin?: string; folder?: string; drop?: string } = {};
  const report = randomBytes(300_000);

  /** A stranger's browser: its own context, so no cookie of the signed-in admin. */
  const stranger = async (locale = 'en-US'): Promise<Page> => {
    const ctx = await browser.newContext({ viewport: { width: 900, height: 640 }, locale, acceptDownloads: true });
    assert.deepEqual(await ctx.cookies(), []);
    const { page, errors } = await newPage(ctx);
    visitorErrors.push(errors);
    return page;
  };

  const api = (method: string, path: string, body?: BodyInit, json = false) =>
    fetch(`${srv.url}${path}`, { method, body, headers: { Authorization: `Bearer ${token}`, ...(json ? { 'Content-Type': 'application/json' } : {}) } });

  const upload = async (folder: string, name: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('path', folder);
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    const res = await api('POST', '/api/files/upload', form);
    assert.equal(res.status, 200, await res.text());
  };

  /** Selects `name` in the open folder and opens the dialog named by the row's context menu item. */
  const openFromMenu = async (name: string, item: 'Share link…' | 'File request…') => {
    await admin.goto(`${srv.url}/files/home`);
    const row = admin.getByTestId('file-list').getByRole('option', { name: new RegExp(name) });
    await row.click({ button: 'right' });
    await admin.getByRole('menuitem', { name: item }).click();
    return admin.getByRole('dialog');
  };

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer({ SERVICE_UPLOAD_MAX_CHUNK_BYTES: String(CHUNK) });
    browser = await launchBrowser();
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
    ({ token } = (await login.json()) as { token: string });
    for (const dir of ['/home/photos', '/home/photos/raw', '/home/inbox'])
      assert.equal((await api('POST', '/api/files/mkdir', JSON.stringify({ path: dir }), true)).status, 200);
    await upload('/home', 'report.bin', report);
    await upload(
      '/home/photos',
      'sunset.png',
      await sharp({ create: { width: 320, height: 200, channels: 3, background: '#e07a2f' } })
        .png()
        .toBuffer(),
    );
    await upload('/home/photos', 'notes.txt', Buffer.from('shot at dusk\n'.repeat(50)));
    await upload('/home/photos/raw', 'frame-01.txt', Buffer.from('raw frame'));
    await upload('/home/inbox', 'earlier-secret.txt', Buffer.from('not for visitors'));
    ({ page: admin, errors: adminErrors } = await signedInPage(browser, srv.url));
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('a file shared from the share dialog opens its landing page and downloads byte-exact in a fresh browser', async () => {
    const dlg = await openFromMenu('report\\.bin', 'Share link…');
    await dlg.getByRole('button', { name: 'Create link' }).click();
    links.file = await dlg.getByLabel('Link').inputValue();
    assert.match(links.file, /\/s\/[\w-]+$/);
    await admin.keyboard.press('Escape');

    // A browser lands on the file's page (so a chat preview never spends the link) and downloads from its button.
    const page = await stranger();
    await page.goto(links.file);
    await page.getByRole('heading', { name: 'report.bin' }).waitFor();
    const dl = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download' }).click();
    const d = await dl;
    assert.equal(d.suggestedFilename(), 'report.bin');
    assert.deepEqual(await bytesOf(d), report);
  });

  test('a PIN link shows the PIN form; a wrong PIN shows the error, the right one opens the file page, which downloads', async () => {
    const dlg = await openFromMenu('report\\.bin', 'Share link…');
    await dlg.getByLabel('Generate an 8-digit PIN').check();
    await dlg.getByRole('button', { name: 'Create link' }).click();
    links.pinned = await dlg.getByLabel('Link').inputValue();
    links.pin = (await dlg.locator('.pin').innerText()).match(/\b(\d{8})\b/)![1];
    await admin.keyboard.press('Escape');

    const page = await stranger();
    const first = await page.goto(links.pinned);
    assert.equal(first!.status(), 401);
    await page.getByRole('heading', { name: 'This link is protected' }).waitFor();
    await shot(page, 'public-pin-form');
    const wrong = links.pin === '00000000' ? '11111111' : '00000000';
    await page.getByLabel('PIN').fill(wrong);
    await page.getByRole('button', { name: 'Open' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.innerText(), 'Wrong PIN. 4 tries left.');
    assert.equal(await page.getByLabel('PIN').inputValue(), '');

    await page.getByLabel('PIN').fill(links.pin);
    await page.getByRole('button', { name: 'Open' }).click();
    // The right PIN leads to the file's page (never the PIN form again): name, size, type, a Download button.
    await page.getByRole('heading', { name: 'report.bin' }).waitFor();
    assert.equal(await page.getByLabel('PIN').count(), 0);
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.match(await page.locator('main').innerText(), /Size: 293 KB · Type: application\/octet-stream/);
    await shot(page, 'ui-share-pin-file');
    const dl = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download' }).click();
    const d = await dl;
    assert.equal(d.suggestedFilename(), 'report.bin');
    assert.deepEqual(await bytesOf(d), report);
  });

  test('a shared folder shows its browse page with a thumbnail and offers a valid ZIP', async () => {
    const dlg = await openFromMenu('photos', 'Share link…');
    await dlg.getByRole('button', { name: 'Create link' }).click();
    links.folder = await dlg.getByLabel('Link').inputValue();
    await admin.keyboard.press('Escape');

    const page = await stranger();
    const res = await page.goto(links.folder);
    assert.equal(res!.status(), 200);
    await page.getByRole('heading', { name: 'photos' }).waitFor();
    await page.getByRole('link', { name: 'notes.txt' }).waitFor();
    await page.getByRole('link', { name: 'raw' }).waitFor();
    assert.match(await page.locator('main').innerText(), /3 items/);
    // The thumbnail job runs after the upload; the gallery shows it once ready.
    const thumb = page.locator('ul.l img');
    for (let i = 0; i < 30 && (await thumb.count()) === 0; i++) {
      await page.waitForTimeout(500);
      await page.reload();
    }
    await page.waitForFunction(() => ((document.querySelector('ul.l img') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0, undefined, { timeout: 10_000 });
    await shot(page, 'public-share-page');

    const dl = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download all (ZIP)' }).click();
    const d = await dl;
    assert.equal(d.suggestedFilename(), 'photos.zip');
    const entries = await unzip(await bytesOf(d));
    assert.deepEqual([...entries.keys()].sort(), ['notes.txt', 'raw/frame-01.txt', 'sunset.png']);
    assert.equal(entries.get('raw/frame-01.txt')!.toString(), 'raw frame');
    assert.equal(entries.get('notes.txt')!.toString(), 'shot at dusk\n'.repeat(50));
    assert.equal((await sharp(entries.get('sunset.png')!).metadata()).width, 320);

    // Rows line up whether or not they have a thumbnail: every name starts at the same x.
    const xs = await page.locator('ul.l li a').evaluateAll((as) => as.map((a) => Math.round(a.getBoundingClientRect().left)));
    assert.equal(new Set(xs).size, 1, `row names start at ${xs.join(', ')}`);
    // Text opens in a preview page instead of downloading; the image opens in the gallery.
    await page.getByRole('link', { name: 'notes.txt' }).click();
    await page.getByRole('heading', { name: 'notes.txt' }).waitFor();
    assert.match(await page.locator('pre.tx').innerText(), /^shot at dusk\n/);
    await page.getByRole('link', { name: 'Back to the folder' }).click();
    await page.getByRole('link', { name: 'sunset.png' }).click();
    await page.getByRole('heading', { name: 'sunset.png' }).waitFor();
    await page.waitForFunction(() => (document.querySelector('img.full') as HTMLImageElement | null)?.naturalWidth === 320, undefined, { timeout: 10_000 });
    await shot(page, 'ui-share-gallery');
  });

  test('a file request made in the UI takes two files from an anonymous visitor, in chunks, through network faults', async () => {
    const dlg = await openFromMenu('inbox', 'File request…');
    await dlg.getByRole('button', { name: 'Create link' }).click();
    links.drop = await dlg.getByLabel('Link').inputValue();
    assert.match(links.drop, /\/d\/[\w-]+$/);
    await admin.keyboard.press('Escape');

    const page = await stranger();
    const seen: string[] = [];
    page.on(
      'response',
      (r) =>
        void r.text().then(
          (t) => seen.push(`${r.url()} ${t}`),
          () => undefined,
        ),
    );
    // Faults, one each: part 2 of the first file loses its connection; at part 3 the browser goes
    // offline for longer than a few quick retries last; the second file's part meets a full disk.
    const parts: string[] = [];
    const faults = new Set<string>();
    await page.route('**/api/public/drop/**/parts/*', async (route) => {
      const part = `${parts.filter((p) => p === 'done').length ? 'b' : 'a'}${route.request().url().split('/').pop()}`;
      parts.push(part);
      if (part === 'a2' && !faults.has(part)) {
        faults.add(part);
        return route.abort('connectionreset');
      }
      if (part === 'a3' && !faults.has(part)) {
        faults.add(part);
        await page.context().setOffline(true);
        setTimeout(() => void page.context().setOffline(false), OFFLINE_MS);
        return route.abort('internetdisconnected');
      }
      if (part === 'b1' && !faults.has(part)) {
        faults.add(part);
        return route.fulfill({
          status: 507,
          contentType: 'application/json',
          body: JSON.stringify({ error: 'quota_exceeded', message: 'The storage is full.' }),
        });
      }
      return route.fallback();
    });
    page.on('request', (r) => r.url().endsWith('/finalize') && parts.push('done'));
    await page.goto(links.drop);
    await page.getByRole('heading', { name: 'Send files' }).waitFor();
    const big = randomBytes(CHUNK * 2 + CHUNK / 2);
    const small = Buffer.from('second file\n');
    await page.getByLabel('Your name (optional)').fill('Ayşe Yılmaz');
    await page.getByLabel('Note (optional)').fill('Two files for the audit.\nThanks!');
    await page.getByLabel('Files').setInputFiles([
      { name: 'scan.bin', mimeType: 'application/octet-stream', buffer: big },
      { name: 'letter.txt', mimeType: 'text/plain', buffer: small },
    ]);
    await shot(page, 'public-drop-page');
    await page.getByRole('button', { name: 'Send' }).click();
    const status = page.getByRole('status');
    await status.getByText('Connection lost. Sending resumes when it is back…').waitFor();
    await status.getByText('Sending failed: The storage is full.').waitFor({ timeout: OFFLINE_MS + 20_000 });
    // Sending again goes on where it stopped: same submission, only the missing part.
    await page.getByRole('button', { name: 'Send' }).click();
    await status.getByText('Thank you, 2 file(s) received.').waitFor({ timeout: 20_000 });
    await shot(page, 'public-drop-done');
    assert.deepEqual(parts, ['a1', 'a2', 'a2', 'a3', 'a3', 'done', 'b1', 'b1', 'done']);

    const inbox = join(srv.dataDir, 'inbox');
    const folders = readdirSync(inbox).filter((n) => n !== 'earlier-secret.txt');
    assert.equal(folders.length, 1);
    assert.match(folders[0], /^\d{4}-\d{2}-\d{2}_\d{6}_Ayşe_Yılmaz$/);
    const sub = join(inbox, folders[0]);
    assert.deepEqual(readdirSync(sub).sort(), ['NOT.txt', 'letter.txt', 'scan.bin']);
    assert.equal(readFileSync(join(sub, 'NOT.txt'), 'utf8'), 'Two files for the audit.\nThanks!');
    assert.deepEqual(readFileSync(join(sub, 'scan.bin')), big);
    assert.deepEqual(readFileSync(join(sub, 'letter.txt')), small);

    // The visitor learned nothing of the folder: neither its other files nor where theirs went.
    const html = await page.content();
    for (const secret of ['earlier-secret.txt', 'inbox', folders[0]]) {
      assert.ok(!html.includes(secret), `the page shows ${secret}`);
      assert.deepEqual(
        seen.filter((s) => s.includes(secret)),
        [],
        `a response carries ${secret}`,
      );
    }
  });

  test('a user made in the admin console signs in elsewhere and cannot reach the admin console', async () => {
    await admin.goto(`${srv.url}/admin/users`);
    await admin.getByRole('button', { name: 'Add user' }).click();
    const dlg = admin.getByRole('dialog');
    await dlg.getByLabel('E-mail').fill(carol.email);
    await dlg.getByLabel('Username').fill('carol');
    await dlg.getByLabel('Password').fill(carol.password);
    await dlg.getByRole('button', { name: 'Create' }).click();
    await admin.getByRole('cell', { name: carol.email }).waitFor();

    const page = await stranger();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(page, srv.url, carol);
    await page.getByRole('link', { name: 'My links' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Admin' }).count(), 0);

    const adminApi: string[] = [];
    page.on('request', (r) => r.url().includes('/api/admin/') && adminApi.push(r.url()));
    await page.goto(`${srv.url}/admin/users`);
    await page.getByText('Only administrators can open this page.').waitFor();
    const text = await page.locator('main').innerText();
    assert.ok(!text.includes(ADMIN.email) && !text.includes(carol.email), 'no user data on the page');
    assert.equal(await page.getByRole('link', { name: 'Users' }).count(), 0);
    assert.deepEqual(adminApi, [], 'the UI asks nothing of the admin API');
    const status = await page.evaluate(() => fetch('/api/admin/users').then((r) => r.status));
    assert.equal(status, 403);
    assert.deepEqual(errors, []);
  });

  test('the public pages in Turkish, and a revoked link shows the styled 404 in Turkish', async () => {
    const page = await stranger('tr-TR');
    await page.goto(links.folder!);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'tr');
    await page.getByRole('link', { name: 'Tümünü indir (ZIP)' }).waitFor();
    assert.match(await page.locator('main').innerText(), /3 öğe/);
    await page.goto(links.pinned!);
    await page.getByRole('heading', { name: 'Bu bağlantı korumalı' }).waitFor();
    await page.getByLabel('PIN').fill('12345678' === links.pin ? '87654321' : '12345678');
    await page.getByRole('button', { name: 'Aç' }).click();
    // The right PIN earlier reset the count of wrong ones.
    await page.getByRole('alert').getByText('Yanlış PIN. 4 deneme hakkı kaldı.').waitFor();
    await page.goto(links.drop!);
    await page.getByRole('heading', { name: 'Dosya gönder' }).waitFor();
    await page.getByLabel('Adınız (isteğe bağlı)').waitFor();

    await admin.goto(`${srv.url}/links`);
    const row = admin.getByRole('row').filter({ has: admin.getByRole('link', { name: '/home/photos', exact: true }) });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await admin.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('Revoked').waitFor();

    const res = await page.goto(links.folder!);
    assert.equal(res!.status(), 404);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'tr');
    await page.getByRole('heading', { name: 'Bağlantı iptal edildi' }).waitFor();
    await page.getByText('Bu bağlantı iptal edildi; artık kullanılamıyor.').waitFor();
    // Styled: the page's own stylesheet applied under its CSP nonce.
    const radius = await page.locator('.card').evaluate((el) => getComputedStyle(el).borderRadius);
    assert.equal(radius, '10px');
    await shot(page, 'public-revoked-tr');
  });

  test('no console errors on the way (a CSP refusal would be one)', () => {
    assert.deepEqual(realErrors(adminErrors), []);
    assert.deepEqual(realErrors(visitorErrors.flat()), []);
  });
});
