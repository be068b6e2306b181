/**
 * An encrypted upload resumed after a page reload (docs/vault.md, "Resume after a reload"), against a real
 * server in Debian's Chromium: the upload into an encrypted folder is stopped after two parts reached the
 * server, the page reloads (forgetting the vault's keys), the pending record holds no plaintext, another
 * file is refused in the panel with nothing sent, and the same file picked again (after the unlock dialog)
 * sends only the missing parts; the decrypted download has the original's SHA-256.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { cipherSize } from '../../renderer/src/vault/crypto/padding';
import { ensureRendererBuilt, fileRow, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';
import { ENCRYPTED_NAME, PASSPHRASE, confirmRecoveryKey, createVault, newEncryptedFolder, unlockWith, upload, uploadsDone } from './ui-vault-helpers';

const skip = needTool('chromium', 'chromium') ?? undefined;
const SIZE = 30 * 1000 * 1000 + 4321;
const CHUNKS = '**/api/files/upload/chunk?*';
/** Parts let through before the upload is stopped. */
const BEFORE = 2;

const partOf = (url: string) => Number(new URL(url).searchParams.get('part'));

/** Waits until `pred` holds, checking every 100 ms (bounded, never a guess at the machine's speed). */
async function until(pred: () => boolean, what: string, ms = 120_000): Promise<void> {
  for (const end = Date.now() + ms; !pred(); await new Promise((r) => setTimeout(r, 100))) if (Date.now() > end) assert.fail(`timed out: ${what}`);
}

describe('web UI: an encrypted upload resumed after a reload', { skip, timeout: 600_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let work: string;

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url, undefined, { acceptDownloads: true }));
    work = join(srv.dataDir, '..', 'work');
    mkdirSync(join(work, 'elsewhere'), { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('stopped mid-way, reloaded, the same file picked again: only the missing parts are sent, the bytes decrypt equal', async () => {
    const bytes = randomBytes(SIZE);
    const want = createHash('sha256').update(bytes).digest('hex');
    const big = join(work, 'holiday.bin');
    writeFileSync(big, bytes);
    // Two files it must refuse: another name with the same size, and the same name with another size.
    writeFileSync(join(work, 'other.bin'), randomBytes(SIZE));
    writeFileSync(join(work, 'elsewhere', 'holiday.bin'), randomBytes(SIZE - 3_000_000));

    await createVault(page, srv.url);
    await confirmRecoveryKey(page);
    await newEncryptedFolder(page, 'Safe');
    await fileRow(page, 'Safe').dblclick();

    // The first parts pass; every later one is held unanswered, as if the connection hung, until the reload.
    const passed = new Set<number>();
    const stored = new Set<number>();
    const held: Route[] = [];
    let chunkSize = 0;
    page.on('response', async (r) => {
      if (r.url().includes('/api/files/upload/init') && r.ok()) chunkSize = ((await r.json()) as { chunk_size: number }).chunk_size;
      if (r.url().includes('/api/files/upload/chunk?') && r.ok() && passed.has(partOf(r.url()))) stored.add(partOf(r.url()));
    });
    await page.route(CHUNKS, async (route) => {
      if (passed.size < BEFORE) {
        passed.add(partOf(route.request().url()));
        await route.fallback();
      } else held.push(route);
    });
    await upload(page, [big]);
    await until(() => stored.size === BEFORE && held.length > 0, 'two parts stored, the next held');
    const total = Math.ceil(cipherSize(SIZE) / chunkSize);
    assert.ok(total >= BEFORE + 2, `several parts (${total})`);

    // What a reload keeps: the ciphertext name, its size, the header and the folder's id; nothing in clear.
    const [rec] = JSON.parse((await page.evaluate(() => localStorage.getItem('filedock.uploads'))) ?? '[]');
    assert.match(rec.name, ENCRYPTED_NAME);
    assert.equal(rec.size, cipherSize(SIZE));
    assert.equal(rec.last_modified, 0);
    assert.equal(typeof rec.vault.folder_id, 'number');
    assert.equal(Buffer.from(rec.vault.header, 'base64url').subarray(0, 4).toString(), 'FDV1');
    assert.ok(!JSON.stringify(rec).includes('holiday'), 'no plaintext name');

    const sent: number[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/files/upload/chunk?')) sent.push(partOf(r.url()));
    });
    let workers = 0;
    page.on('worker', () => workers++);
    // The held parts are failed and the route removed only after the reload: removing it first releases them (the
    // browser's interception lets paused requests go on), and the reload did not always cut them off before their
    // bytes reached the server, which then held parts this test counted as missing.
    await page.reload();
    for (const r of held) await r.abort().catch(() => {});
    await page.unroute(CHUNKS);
    // What the resumed upload must send is what the server lacks: its session holds exactly the parts let through.
    const status = await page.evaluate((id) => fetch(`/api/files/upload/status?upload_id=${id}`).then((r) => r.json()), rec.upload_id as string);
    assert.deepEqual(
      (status.parts as { part: number }[]).map((p) => p.part).sort((a, b) => a - b),
      [...stored].sort((a, b) => a - b),
      'the server holds only the parts let through',
    );

    const row = page.getByTestId('uploads').locator('li[data-state=needs_file]');
    await row.getByText('Encrypted file').waitFor({ timeout: 30_000 });
    const pick = (file: string) => row.locator('input[type=file]').setInputFiles(file);
    // Each refusal is a new alert (a pick clears the last one first): counted as they appear.
    await page.evaluate(() => {
      const w = window as unknown as { refusals: number };
      w.refusals = 0;
      new MutationObserver((list) => {
        for (const m of list) for (const n of m.addedNodes) if (n instanceof HTMLElement && n.matches('[role=alert]')) w.refusals++;
      }).observe(document.querySelector('[data-testid=uploads]')!, { childList: true, subtree: true });
    });
    const refusals = (n: number) => page.waitForFunction((k) => (window as unknown as { refusals: number }).refusals === k, n, { timeout: 60_000 });

    // Another file: the unlock dialog asks first (a reload forgot the keys), then the panel refuses it.
    await pick(join(work, 'other.bin'));
    await unlockWith(page, PASSPHRASE);
    const refusal = row.getByRole('alert').filter({ hasText: 'This is not the file this upload was started with' });
    await refusal.waitFor({ timeout: 60_000 });
    await refusals(1);
    await shot(page, 'ui-vault-resume-refused');
    await pick(join(work, 'elsewhere', 'holiday.bin'));
    await refusals(2);
    await refusal.waitFor();
    assert.deepEqual(sent, [], 'nothing sent for a refused file');
    assert.equal(await row.count(), 1, 'still waiting for its file');

    await pick(big);
    await uploadsDone(page, 300_000);
    const missing = Array.from({ length: total }, (_, i) => i + 1).filter((p) => !stored.has(p));
    assert.deepEqual(
      [...new Set(sent)].sort((a, b) => a - b),
      missing,
      'only the parts the server lacked',
    );
    assert.equal(sent.length, missing.length, 'each once');
    assert.ok(workers > 0, 'the resumed parts were sealed in a worker');
    assert.equal(await page.evaluate(() => localStorage.getItem('filedock.uploads')), '[]');

    await fileRow(page, 'holiday.bin').waitFor({ timeout: 60_000 });
    const dl = page.waitForEvent('download', { timeout: 300_000 });
    await fileRow(page, 'holiday.bin').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Download', exact: true }).click();
    const saved = await dl;
    assert.equal(saved.suggestedFilename(), 'holiday.bin');
    assert.equal(
      createHash('sha256')
        .update(readFileSync((await saved.path())!))
        .digest('hex'),
      want,
    );
    assert.deepEqual(
      errors.filter((e) => !/Failed to load resource/.test(e)),
      [],
    );
  });
});
