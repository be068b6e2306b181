/**
 * Encrypted downloads and media through the vault's stream worker (issue 31; docs/vault.md, "Streaming"),
 * against a real server in Debian's Chromium: a download saved by the browser's download manager as the
 * worker decrypts it is byte-identical; a byte flipped on the disk in a later chunk fails that download
 * (never a complete file); an encrypted video plays and seeks past its middle, fetching only part of its
 * ciphertext; a link to an encrypted file without a preview saves through the worker in a fresh context
 * and counts one download.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ensureRendererBuilt, fileRow, launchBrowser, newPage, signedInPage, startServer, type RunningServer } from './ui-harness';
import { confirmRecoveryKey, createVault, newEncryptedFolder, upload, uploadsDone, walk } from './ui-vault-helpers';

const skip = (needTool('chromium', 'chromium') || needTool('ffmpeg', 'ffmpeg')) ?? undefined;
const MiB = 1 << 20;
const HEADER = 94;
const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The hidden frames that started downloads through the worker are removed once the browser holds them (bounded wait). */
async function noDownloadFrames(p: Page): Promise<void> {
  await p.waitForFunction(() => ![...document.querySelectorAll('iframe')].some((f) => f.src.includes('/vault-stream/')), null, { timeout: 60_000 });
}

describe('web UI: encrypted downloads and media through the stream worker', { skip, timeout: 600_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let errors: string[];
  let work: string;
  const data = randomBytes(5 * MiB + 4321);
  const secret = () => join(srv.dataDir, 'Secret');
  /** The stored ciphertext of the only file in the encrypted folder of exactly `size`-ish plaintext. */
  const storedOf = (min: number, max: number) => walk(secret()).find((p) => statSync(p).size > min && statSync(p).size < max)!;

  const menu = async (row: string, item: string) => {
    await fileRow(page, row).click({ button: 'right' });
    await page.getByRole('menuitem', { name: item, exact: true }).click();
  };

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    ({ ctx, page, errors } = await signedInPage(browser, srv.url, undefined, { acceptDownloads: true }));
    work = join(srv.dataDir, '..', 'work');
    mkdirSync(work, { recursive: true });
    await createVault(page, srv.url);
    await confirmRecoveryKey(page);
    await newEncryptedFolder(page, 'Secret');
    await fileRow(page, 'Secret').dblclick();
    writeFileSync(join(work, 'data.bin'), data);
    writeFileSync(join(work, 'tampered.bin'), randomBytes(4 * MiB));
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=s=320x240:r=25:d=60',
      '-vf',
      'noise=alls=30:allf=t',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '25',
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      join(work, 'clip.mp4'),
    ]);
    await upload(page, [join(work, 'data.bin'), join(work, 'tampered.bin'), join(work, 'clip.mp4')]);
    await uploadsDone(page, 300_000);
    await fileRow(page, 'clip.mp4').waitFor({ timeout: 60_000 });
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('a download is saved by the browser as the worker decrypts it, byte-identical', async () => {
    // Counts the worker's frames as they are added, so their removal below is of frames that were there.
    await page.evaluate(() => {
      const w = window as unknown as { streamFrames: number };
      w.streamFrames = 0;
      new MutationObserver((list) => {
        for (const m of list) for (const n of m.addedNodes) if (n instanceof HTMLIFrameElement && n.src.includes('/vault-stream/')) w.streamFrames++;
      }).observe(document.body, { childList: true });
    });
    const dl = page.waitForEvent('download', { timeout: 120_000 });
    await menu('data.bin', 'Download');
    const saved = await dl;
    assert.match(saved.url(), /\/vault-stream\/[0-9a-f]{36}\/data\.bin$/, 'through the worker, not a blob');
    assert.equal(saved.suggestedFilename(), 'data.bin');
    assert.equal(await saved.failure(), null);
    assert.equal(sha(readFileSync((await saved.path())!)), sha(data));
    assert.equal(await page.evaluate(() => (window as unknown as { streamFrames: number }).streamFrames), 1, 'one frame started it');
    await noDownloadFrames(page);
    // One-time: the address answers nothing once its download ended (asked from a frame: the worker answers navigations in its scope).
    const again = await page.evaluate(
      (u) =>
        new Promise<string>((resolve) => {
          const f = Object.assign(document.createElement('iframe'), { hidden: true, src: u });
          f.addEventListener('load', () => {
            resolve(f.contentDocument?.body.textContent ?? '');
            f.remove();
          });
          document.body.append(f);
        }),
      new URL(saved.url()).pathname,
    );
    assert.equal(again, 'This address is no longer valid.');
  });

  test('a byte flipped in a later chunk fails the download; the page says the file could not be verified', async () => {
    const target = storedOf(4 * MiB, 5 * MiB);
    const fd = openSync(target, 'r+');
    const b = Buffer.alloc(1);
    const at = HEADER + 2 * (MiB + 16) + 777;
    readSync(fd, b, 0, 1, at);
    b[0] ^= 0x01;
    writeSync(fd, b, 0, 1, at);
    closeSync(fd);
    const dl = page.waitForEvent('download', { timeout: 120_000 });
    await menu('tampered.bin', 'Download');
    const saved = await dl;
    assert.notEqual(await saved.failure(), null, 'the browser marks the download failed');
    await page.getByRole('alert').filter({ hasText: 'changed outside Filedock' }).last().waitFor({ timeout: 60_000 });
    await noDownloadFrames(page);
  });

  test('an encrypted video plays and seeks past its middle without its whole ciphertext being fetched', async () => {
    const cipherTotal = statSync(storedOf(10 * MiB, 100 * MiB)).size;
    let fetched = 0;
    // What the worker asked the server for (each answer's length: an upper bound of what it read).
    const counted = (r: import('playwright-core').Response) => {
      if (r.request().serviceWorker() && r.url().includes('/api/files/raw')) fetched += Number(r.headers()['content-length'] ?? 0);
    };
    ctx.on('response', counted);
    await fileRow(page, 'clip.mp4').dblclick();
    const frame = page.frameLocator('[data-testid=vault-player]');
    const video = frame.locator('video');
    await video.waitFor({ timeout: 60_000 });
    const handle = await video.elementHandle();
    await handle!.evaluate((v: HTMLVideoElement) => (v.readyState >= 1 ? null : new Promise((r) => v.addEventListener('loadedmetadata', r, { once: true }))));
    const duration = await handle!.evaluate((v: HTMLVideoElement) => v.duration);
    assert.ok(duration > 59 && duration < 61, `duration ${duration}`);
    const reached = await handle!.evaluate(
      (v: HTMLVideoElement, to: number) =>
        new Promise<number>((resolve) => {
          v.muted = true;
          v.addEventListener('timeupdate', () => {
            if (v.currentTime >= to) resolve(v.currentTime);
          });
          v.currentTime = to;
          void v.play().catch(() => {});
        }),
      duration * 0.7,
    );
    assert.ok(reached >= duration * 0.7, `played at ${reached}`);
    const error = await handle!.evaluate((v: HTMLVideoElement) => v.error?.message ?? null);
    assert.equal(error, null);
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await page.getByTestId('vault-player').waitFor({ state: 'detached' });
    ctx.off('response', counted);
    assert.ok(fetched > 0, 'the worker fetched the ciphertext');
    assert.ok(fetched < cipherTotal * 0.85, `${fetched} of ${cipherTotal} ciphertext bytes fetched`);
  });

  test('a link to an encrypted file without a preview saves through the worker in a fresh context, counted once', async () => {
    await menu('data.bin', 'Share link…');
    const dlg = page.getByRole('dialog');
    await dlg.getByRole('button', { name: 'Create link' }).click();
    const link = await dlg.getByLabel('Link').inputValue();
    await page.keyboard.press('Escape');
    const fresh = await browser.newContext({ viewport: { width: 1000, height: 760 }, locale: 'en-US', acceptDownloads: true });
    const { page: visitor, errors: visitorErrors } = await newPage(fresh);
    await visitor.goto(link);
    const save = visitor.locator('#vault-link-save');
    await save.waitFor({ timeout: 30_000 });
    await visitor.locator('#vault-link-name', { hasText: 'data.bin' }).waitFor();
    const dl = visitor.waitForEvent('download', { timeout: 120_000 });
    await save.click();
    const saved = await dl;
    assert.match(saved.url(), /\/vault-stream\//);
    assert.equal(saved.suggestedFilename(), 'data.bin');
    assert.equal(sha(readFileSync((await saved.path())!)), sha(data));
    await visitor.locator('#vault-link-msg', { hasText: 'Decrypted in your browser' }).waitFor({ timeout: 30_000 });
    await noDownloadFrames(visitor);
    const token = new URL(link).pathname.split('/').pop();
    const shares = await page.evaluate(() => fetch('/api/files/share', { headers: { accept: 'application/json' } }).then((r) => r.json()));
    const mine = (Array.isArray(shares) ? shares : (shares.shares ?? shares.items)).find((s: { token: string }) => s.token === token);
    assert.equal(mine.downloads, 1, 'one visit, one download');
    assert.deepEqual(visitorErrors, []);
    await fresh.close();
  });

  test('no console errors beyond the refusals the tests caused', () => {
    const real = errors.filter((e) => !/Failed to load resource/.test(e));
    assert.deepEqual(real, []);
  });
});
