/**
 * The vault and encrypted folders in the web UI (issue 31), against a real
 * server in Debian's Chromium: a vault made with its recovery key shown once,
 * lock and unlock, a wrong passphrase refused, the recovery key resetting the
 * passphrase; an encrypted folder, uploads whose names and bytes reach the disk
 * only as ciphertext, a 200 MB upload resumed after a network cut and its
 * decrypted download checked by SHA-256, previews of an image, a text and a
 * PDF decrypted in the page, and a byte flipped on the disk shown as an
 * integrity error with no content.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, openSync, readFileSync, readSync, readdirSync, statSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { needTool } from '../helpers/tools';
import { pdfWith } from '../helpers/documents';
import { ensureRendererBuilt, fileRow, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';
import { ENCRYPTED_NAME, PASSPHRASE, confirmRecoveryKey, createVault, newEncryptedFolder, unlockWith, upload, uploadsDone, walk } from './ui-vault-helpers';

const skip = needTool('chromium', 'chromium') ?? undefined;
const RECOVERED_PASSPHRASE = 'a new and longer vault passphrase 7';
const NEW_PASSPHRASE = 'yet another passphrase, changed 9';
const BIG = 200 * 1000 * 1000 + 12_345;

describe('web UI: the vault and encrypted folders', { skip, timeout: 900_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let errors: string[];
  let work: string;
  let recoveryKey = '';
  const secret = () => join(srv.dataDir, 'Secret');

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    ({ ctx, page, errors } = await signedInPage(browser, srv.url, undefined, { acceptDownloads: true }));
    work = join(srv.dataDir, '..', 'work');
    mkdirSync(work, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('set up: the recovery key is shown once, copied into a text file, confirmed', async () => {
    recoveryKey = await createVault(page, srv.url);
    assert.match(recoveryKey, /^([a-z2-7]{4} )+[a-z2-7]{1,4}$/, 'lowercase base32 in groups of four');
    await shot(page, 'ui-vault-recovery-key');
    const dl = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download as a text file' }).click();
    const file = await (await dl).path();
    assert.ok(readFileSync(file, 'utf8').includes(recoveryKey));
    assert.ok(await page.getByRole('button', { name: 'Continue' }).isDisabled(), 'not before "I have saved it"');
    await confirmRecoveryKey(page);
    await page.getByText('Your vault is unlocked in this browser.').waitFor();
    // The key is never shown again, and nothing of the vault is kept by the browser.
    await page.reload();
    await page.getByText('Your vault is locked.').waitFor();
    assert.equal(await page.getByTestId('recovery-key').count(), 0);
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + document.cookie);
    assert.ok(!stored.includes(recoveryKey.replaceAll(' ', '')) && !/vault/i.test(stored), stored);
  });

  test('lock and unlock; a wrong passphrase is refused', async () => {
    await page.getByRole('button', { name: 'Unlock' }).click();
    await unlockWith(page, 'not the passphrase at all');
    await page.getByTestId('vault-unlock').getByRole('alert').filter({ hasText: 'That is not the vault passphrase.' }).waitFor({ timeout: 30_000 });
    await shot(page, 'ui-vault-wrong-passphrase');
    await unlockWith(page, PASSPHRASE);
    await page.getByText('Your vault is unlocked in this browser.').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Lock' }).click();
    await page.getByText('Your vault is locked.').waitFor();
  });

  test('the recovery key sets a new passphrase; the old one no longer opens the vault', async () => {
    await page.getByRole('button', { name: 'Forgot passphrase?' }).click();
    const form = page.getByTestId('vault-recover');
    await form.getByLabel('Recovery key').fill(`  ${recoveryKey.toUpperCase()}  `);
    await form.getByLabel('New vault passphrase').fill(RECOVERED_PASSPHRASE);
    await form.getByLabel('Type it again').fill(RECOVERED_PASSPHRASE);
    await form.getByRole('button', { name: 'Set new passphrase' }).click();
    await page.getByText('New passphrase set.').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Lock' }).click();
    await page.getByRole('button', { name: 'Unlock' }).click();
    await unlockWith(page, PASSPHRASE);
    await page.getByTestId('vault-unlock').getByText('That is not the vault passphrase.').waitFor({ timeout: 30_000 });
    await unlockWith(page, RECOVERED_PASSPHRASE);
    await page.getByText('Your vault is unlocked in this browser.').waitFor({ timeout: 30_000 });
  });

  test('change passphrase: the current one is proved first, then the new one opens the vault', async () => {
    await page.getByRole('button', { name: 'Change passphrase' }).click();
    const form = page.getByTestId('vault-change');
    await form.getByLabel('Current vault passphrase').fill('wrong current passphrase');
    await form.getByLabel('New vault passphrase').fill(NEW_PASSPHRASE);
    await form.getByLabel('Type it again').fill(NEW_PASSPHRASE);
    await form.getByRole('button', { name: 'Change passphrase' }).click();
    await form.getByRole('alert').filter({ hasText: 'That is not the vault passphrase.' }).waitFor({ timeout: 30_000 });
    await form.getByLabel('Current vault passphrase').fill(RECOVERED_PASSPHRASE);
    await form.getByRole('button', { name: 'Change passphrase' }).click();
    await page.getByText('Vault passphrase changed.').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Lock' }).click();
    await page.getByRole('button', { name: 'Unlock' }).click();
    await unlockWith(page, NEW_PASSPHRASE);
    await page.getByText('Your vault is unlocked in this browser.').waitFor({ timeout: 30_000 });
  });

  test('an encrypted folder: uploads reach the disk as ciphertext, names decrypt in the list, lock asks again', async () => {
    await newEncryptedFolder(page, 'Secret');
    assert.ok(statSync(secret()).isDirectory(), 'the root keeps the name given in its plain parent');
    writeFileSync(join(work, 'notes.txt'), 'plaintext notes: the quick brown fox\n');
    writeFileSync(
      join(work, 'photo.png'),
      await sharp({ create: { width: 640, height: 480, channels: 3, background: '#2a7' } })
        .png()
        .toBuffer(),
    );
    writeFileSync(join(work, 'report.pdf'), pdfWith(['Quarterly report, encrypted']));
    await fileRow(page, 'Secret').dblclick();
    await upload(
      page,
      ['notes.txt', 'photo.png', 'report.pdf'].map((n) => join(work, n)),
    );
    await uploadsDone(page);
    for (const n of ['notes.txt', 'photo.png', 'report.pdf']) await fileRow(page, n).waitFor();
    const onDisk = readdirSync(secret());
    assert.equal(onDisk.length, 3);
    for (const n of onDisk) {
      assert.match(n, ENCRYPTED_NAME);
      const bytes = readFileSync(join(secret(), n));
      assert.equal(bytes.subarray(0, 4).toString(), 'FDV1');
      assert.ok(!bytes.includes('quick brown fox') && !bytes.includes('Quarterly'));
    }
    // The image's thumbnail is made here, stored encrypted and shown decrypted.
    await page.getByRole('button', { name: 'Grid view' }).click();
    await fileRow(page, 'photo.png').locator('img[src^="blob:"]').waitFor({ timeout: 30_000 });
    await shot(page, 'ui-vault-folder');
    await page.getByRole('button', { name: 'List view' }).click();
    // The filter searches the decrypted names in the browser.
    await page.locator('#search-q').fill('report');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /report/ }).waitFor();
    await fileRow(page, 'report.pdf').waitFor();
    assert.equal(await fileRow(page, 'notes.txt').count(), 0);
    await page.goto(`${srv.url}/account/vault`);
    await page.getByRole('button', { name: 'Lock' }).click();
    await page.goto(`${srv.url}/files/home/Secret`);
    await page.getByTestId('vault-gate').getByText('This folder is encrypted. Unlock your vault to see what is inside.').waitFor();
    assert.equal(await fileRow(page, 'notes.txt').count(), 0);
    await page.getByTestId('vault-gate').getByRole('button', { name: 'Unlock' }).click();
    await unlockWith(page, NEW_PASSPHRASE);
    await fileRow(page, 'notes.txt').waitFor({ timeout: 30_000 });
  });

  test('previews decrypt an image, a text file and a PDF in the page', async () => {
    await fileRow(page, 'photo.png').dblclick();
    const img = page.getByTestId('preview').locator('img[src^="blob:"]');
    await img.waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => (document.querySelector('[data-testid=preview] img') as HTMLImageElement | null)?.naturalWidth === 640);
    await page.keyboard.press('Escape');
    await fileRow(page, 'notes.txt').dblclick();
    await page.getByTestId('preview').locator('pre').filter({ hasText: 'the quick brown fox' }).waitFor({ timeout: 30_000 });
    await shot(page, 'ui-vault-preview-text');
    await page.keyboard.press('Escape');
    await fileRow(page, 'report.pdf').dblclick();
    await page.getByTestId('preview').locator('iframe[src^="blob:"]').waitFor({ timeout: 30_000 });
    // The page may not read its own blob URLs back (connect-src 'self'): the preview's Download gives the same bytes.
    const dl = page.waitForEvent('download');
    await page.getByRole('dialog').getByRole('link', { name: 'Download' }).click();
    const saved = await dl;
    assert.equal(saved.suggestedFilename(), 'report.pdf');
    assert.deepEqual(readFileSync((await saved.path())!), readFileSync(join(work, 'report.pdf')));
    await page.keyboard.press('Escape');
  });

  test('a 200 MB upload survives a network cut; the decrypted download has the same SHA-256', async () => {
    const big = join(work, 'big.bin');
    const sum = createHash('sha256');
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(big);
      out.on('error', reject);
      for (let left = BIG; left > 0; left -= 4 << 20) {
        const b = randomBytes(Math.min(left, 4 << 20));
        sum.update(b);
        out.write(b);
      }
      out.end(resolve);
    });
    const want = sum.digest('hex');
    let held: Array<() => void> | null = [];
    await page.route('**/api/files/upload/chunk?*', async (route) => {
      await new Promise<void>((r) => (held ? held.push(r) : r()));
      await route.fallback();
    });
    try {
      await upload(page, [big]);
      const row = page.getByTestId('uploads').locator('li', { hasText: 'big.bin' });
      await row.and(page.locator('[data-state=uploading]')).waitFor({ timeout: 60_000 });
      while (held!.length === 0) await new Promise((r) => setTimeout(r, 100));
      await ctx.setOffline(true);
      const release = held;
      held = null;
      release.forEach((r) => r());
      await row.and(page.locator('[data-state=offline]')).waitFor({ timeout: 60_000 });
      await shot(page, 'ui-vault-upload-offline');
      await ctx.setOffline(false);
      await uploadsDone(page, 600_000);
    } finally {
      await ctx.setOffline(false);
      await page.unroute('**/api/files/upload/chunk?*');
    }
    await fileRow(page, 'big.bin').waitFor({ timeout: 30_000 });
    const stored = readdirSync(secret())
      .map((n) => join(secret(), n))
      .find((p) => statSync(p).size > BIG)!;
    assert.ok(stored, 'the ciphertext is on disk, padded above the plaintext size');
    const head = Buffer.alloc(4);
    const fd = openSync(stored, 'r');
    readSync(fd, head, 0, 4, 0);
    closeSync(fd);
    assert.equal(head.toString(), 'FDV1');
    const dl = page.waitForEvent('download', { timeout: 600_000 });
    await fileRow(page, 'big.bin').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Download', exact: true }).click();
    const saved = await dl;
    assert.equal(saved.suggestedFilename(), 'big.bin');
    const got = createHash('sha256')
      .update(readFileSync((await saved.path())!))
      .digest('hex');
    assert.equal(got, want);
  });

  test('a byte flipped on the disk: the preview shows the integrity error and no content; nothing is saved', async () => {
    await page.getByRole('button', { name: 'New folder' }).click();
    await page.getByLabel('Folder name').fill('tamper');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await fileRow(page, 'tamper').dblclick();
    writeFileSync(join(work, 'diary.txt'), 'dear diary, nothing to see\n');
    await upload(page, [join(work, 'diary.txt')]);
    await fileRow(page, 'diary.txt').waitFor({ timeout: 60_000 });
    // The only file one folder down in the encrypted folder.
    const target = walk(secret()).find((p) => p.split('/').length === secret().split('/').length + 2)!;
    assert.ok(target, 'the file in the encrypted subfolder');
    const fd = openSync(target, 'r+');
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, 120);
    b[0] ^= 0x01;
    writeSync(fd, b, 0, 1, 120);
    closeSync(fd);
    await fileRow(page, 'diary.txt').dblclick();
    const alert = page.getByTestId('vault-integrity');
    await alert.waitFor({ timeout: 30_000 });
    assert.match(await alert.innerText(), /changed outside Filedock and cannot be verified/);
    assert.equal(await page.getByTestId('preview').locator('pre').count(), 0, 'no content shown');
    assert.ok(!(await page.getByTestId('preview').innerText()).includes('dear diary'));
    await shot(page, 'ui-vault-integrity');
    let downloaded = false;
    page.on('download', () => {
      downloaded = true;
    });
    await page.getByRole('dialog').getByRole('link', { name: 'Download' }).click();
    await page.getByRole('alert').filter({ hasText: 'changed outside Filedock' }).last().waitFor();
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(downloaded, false, 'tampered bytes are never saved');
    await page.keyboard.press('Escape');
    // A name that is not ciphertext of this folder (written beside the files on the disk) is never shown as a name.
    writeFileSync(join(target, '..', 'a'.repeat(40)), 'FDV1 and nothing else');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await fileRow(page, 'Unreadable item').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId('file-list').getByText('a'.repeat(40)).count(), 0);
    // Delete works on encrypted rows (by their stored path).
    await fileRow(page, 'diary.txt').click();
    await page.keyboard.press('Delete');
    await page.getByRole('button', { name: 'Delete', exact: true }).last().click();
    await fileRow(page, 'diary.txt').waitFor({ state: 'detached' });
    assert.ok(!walk(secret()).includes(target), 'gone from the folder on disk');
  });

  test('no console errors beyond the refusals the tests caused', () => {
    const real = errors.filter((e) => !/Failed to load resource|net::ERR_INTERNET_DISCONNECTED/.test(e));
    assert.deepEqual(real, []);
  });
});
