/**
 * Encrypted folders in the browser (issue 31): the same file uploaded through
 * the Files page into a plain folder and into an encrypted one, then
 * downloaded from each through the page's own Download item (the encrypted one
 * decrypted by the vault's stream worker on its way to the download manager), in Debian's Chromium against the built service on
 * loopback. Alternating plain and encrypted, BENCH_RUNS runs (3), medians.
 * Targets: encrypted upload >= 0.7x plain, decrypted download >= 0.7x plain.
 * An upload is timed from picking the file to its row in the list (the upload
 * finalized and the listing refreshed), a download from the menu click to the
 * saved file complete on disk.
 *
 *   npm run bench -- vault-browser            (BENCH_MB=200, BENCH_RUNS=3)
 */
import { execFileSync } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { createWriteStream, linkSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Page } from 'playwright-core';
import { ensureBuilt, median, noise, startService, table } from './lib';
import { tempDir } from '../test/helpers/tools';
import { ADMIN, ensureRendererBuilt, fileRow, launchBrowser, signedInPage } from '../test/e2e/ui-harness';
import { confirmRecoveryKey, createVault, upload } from '../test/e2e/ui-vault-helpers';

const MB = 1e6;
const BYTES = Number(process.env.BENCH_MB ?? 200) * MB;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LIMIT = 30 * 60_000;

const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

/** In-app navigation: a page load would forget the unlocked vault (its keys live in the page's memory only). */
async function go(page: Page, to: string): Promise<void> {
  await page.evaluate((p) => {
    history.pushState(null, '', p);
    dispatchEvent(new Event('filedock:navigate'));
  }, to);
  await page.getByTestId('file-list').waitFor();
}

async function timedUpload(page: Page, folder: string, file: string, name: string): Promise<number> {
  await go(page, `/files/home/${folder}`);
  const t0 = performance.now();
  await upload(page, [file]);
  await fileRow(page, name).waitFor({ timeout: LIMIT });
  return (performance.now() - t0) / 1000;
}

async function timedDownload(page: Page, name: string): Promise<number> {
  const dl = page.waitForEvent('download', { timeout: LIMIT });
  const t0 = performance.now();
  await fileRow(page, name).click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Download', exact: true }).click();
  const saved = await dl;
  // The encrypted download must go through the vault's stream worker (a blob: address would be the page-side fallback).
  if (name.includes('-enc') && !saved.url().includes('/vault-stream/')) throw new Error(`${name}: saved from ${saved.url()}, not through the stream worker`);
  const path = await saved.path();
  const s = (performance.now() - t0) / 1000;
  if (statSync(path).size !== BYTES) throw new Error(`${name}: ${statSync(path).size} bytes saved, ${BYTES} expected`);
  await saved.delete();
  return s;
}

/**
 * What the page's crypto can reach at best: bare WebCrypto AES-256-GCM in the bench's page. The encrypted
 * rates cannot pass it (each byte is sealed or opened once), whatever the vault's code does around it.
 */
async function cryptoCeiling(page: Page): Promise<{ enc: number; dec: number }> {
  return page.evaluate(async () => {
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    const data = new Uint8Array(1 << 20);
    const iv = new Uint8Array(12);
    const rate = async (op: () => Promise<unknown>) => {
      for (let i = 0; i < 4; i++) await op();
      const t = performance.now();
      for (let i = 0; i < 64; i++) await op();
      return Math.round((64 * 1.048576) / ((performance.now() - t) / 1000));
    };
    const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, data);
    return {
      enc: await rate(() => crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, data)),
      dec: await rate(() => crypto.subtle.decrypt({ name: 'AES-GCM', iv }, key, sealed)),
    };
  });
}

/** The same bare AES-256-GCM through Node's OpenSSL on the same machine: what the CPU itself does. */
function nodeGcm(): number {
  const key = randomBytes(32);
  const data = Buffer.alloc(1 << 20);
  const t = performance.now();
  for (let i = 0; i < 256; i++) {
    const c = createCipheriv('aes-256-gcm', key, Buffer.alloc(12));
    c.update(data);
    c.final();
  }
  return Math.round((256 * 1.048576) / ((performance.now() - t) / 1000));
}

async function main(): Promise<void> {
  ensureBuilt();
  ensureRendererBuilt();
  const { dir, cleanup } = tempDir('vault-browser-');
  const store = join(dir, 'store');
  const work = join(dir, 'work');
  mkdirSync(join(store, 'Plain'), { recursive: true });
  mkdirSync(work, { recursive: true });
  const src = join(work, 'source.bin');
  await pipeline(noise(BYTES), createWriteStream(src));
  const svc = await startService({
    SERVICE_ADMIN_EMAIL: ADMIN.email,
    SERVICE_ADMIN_PASSWORD: ADMIN.password,
    SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
    SERVICE_DEFAULT_STORAGE_NAME: 'home',
    SERVICE_DEFAULT_STORAGE_PATH: store,
  });
  const browser = await launchBrowser();
  try {
    const { page } = await signedInPage(browser, svc.url, undefined, { acceptDownloads: true });
    await createVault(page, svc.url);
    await confirmRecoveryKey(page);
    // The vault stays unlocked from its set-up as long as the page is not loaded again.
    await go(page, '/files/home');
    const box = (await page.getByTestId('file-list').boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height - 10, { button: 'right' });
    await page.getByRole('menuitem', { name: 'New encrypted folder' }).click();
    await page.getByLabel('Folder name').fill('Vault');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await fileRow(page, 'Vault').getByTestId('lock-mark').waitFor({ timeout: 60_000 });
    const before = load();
    const up = { plain: [] as number[], enc: [] as number[] };
    const down = { plain: [] as number[], enc: [] as number[] };
    for (let i = 1; i <= RUNS; i++) {
      // One name per run and folder (hard links: the same bytes, already in the page cache).
      for (const [kind, folder] of [
        ['plain', 'Plain'],
        ['enc', 'Vault'],
      ] as const) {
        const name = `run${i}-${kind}.bin`;
        linkSync(src, join(work, name));
        up[kind].push(await timedUpload(page, folder, join(work, name), name));
        down[kind].push(await timedDownload(page, name));
        console.log(`run ${i} ${kind}: upload ${up[kind].at(-1)!.toFixed(2)} s, download ${down[kind].at(-1)!.toFixed(2)} s`);
      }
    }
    const rate = (xs: number[]) => BYTES / MB / median(xs);
    const rows = (['plain', 'enc'] as const).map((k) => ({
      folder: k === 'plain' ? 'plain' : 'encrypted',
      'upload MB/s': rate(up[k]).toFixed(1),
      'download MB/s': rate(down[k]).toFixed(1),
    }));
    table(`Files page in Chromium, ${BYTES / MB} MB, medians of ${RUNS} (alternating)`, rows);
    const upRatio = rate(up.enc) / rate(up.plain);
    const downRatio = rate(down.enc) / rate(down.plain);
    console.log(`\nencrypted/plain: upload ${upRatio.toFixed(2)}x (target >= 0.7), download ${downRatio.toFixed(2)}x (target >= 0.7)`);
    const ceiling = await cryptoCeiling(page);
    console.log(
      `\nbare AES-256-GCM, 64 x 1 MiB, one call at a time: this Chromium's WebCrypto encrypt ${ceiling.enc} MB/s, decrypt ${ceiling.dec} MB/s; Node's (OpenSSL) ${nodeGcm()} MB/s`,
    );
    console.log(`load before: ${before}\nload after:  ${load()}`);
  } finally {
    await browser.close();
    await svc.stop();
    cleanup();
  }
}

await main();
