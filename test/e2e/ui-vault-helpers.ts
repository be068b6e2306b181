/**
 * Steps the vault's browser tests share (test/e2e/ui-vault*.test.ts): set up
 * a vault on Account → Vault, make an encrypted folder from the Files page,
 * upload into the open folder, and read what the storage holds.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { fileRow } from './ui-harness';

export const PASSPHRASE = 'correct horse battery staple 42';

/** Sets up the vault (passphrase twice, Create); answers the recovery key shown, with its screen still open. */
export async function createVault(page: Page, base: string, passphrase = PASSPHRASE): Promise<string> {
  await page.goto(`${base}/account/vault`);
  const form = page.getByTestId('vault-setup');
  await form.getByLabel('New vault passphrase').fill(passphrase);
  await form.getByLabel('Type it again').fill(passphrase);
  await form.getByRole('button', { name: 'Create vault' }).click();
  const key = page.getByTestId('recovery-key');
  await key.waitFor({ timeout: 30_000 });
  return (await key.innerText()).trim();
}

/** "I have saved my recovery key", then Continue. */
export async function confirmRecoveryKey(page: Page): Promise<void> {
  await page.getByLabel('I have saved my recovery key').check();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByTestId('recovery-key').waitFor({ state: 'detached' });
}

/** Answers the unlock dialog with `passphrase`. */
export async function unlockWith(page: Page, passphrase: string): Promise<void> {
  const dlg = page.getByTestId('vault-unlock');
  await dlg.getByLabel('Vault passphrase').fill(passphrase);
  await dlg.getByRole('button', { name: 'Unlock' }).click();
}

/** Opens `path` inside the app, without a reload (a reload forgets the unlocked vault, as it should). */
export async function goInApp(page: Page, path: string): Promise<void> {
  await page.evaluate((to) => {
    history.pushState(null, '', to);
    window.dispatchEvent(new Event('filedock:navigate'));
  }, path);
}

/** Makes the encrypted folder `name` in the storage's top folder through the Files page's context menu. */
export async function newEncryptedFolder(page: Page, name: string): Promise<void> {
  await goInApp(page, '/files/home');
  const list = page.getByTestId('file-list');
  await page
    .locator('p.statusbar')
    .filter({ hasText: /\d+ items?/ })
    .waitFor();
  // Shift+F10 on the list with nothing selected opens the folder's own menu.
  await list.focus();
  await page.keyboard.press('Escape');
  await page.keyboard.press('Shift+F10');
  await page.getByRole('menuitem', { name: 'New encrypted folder' }).click();
  await page.getByLabel('Folder name').fill(name);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await fileRow(page, name).getByTestId('lock-mark').waitFor({ timeout: 30_000 });
}

/** Picks `files` in the open folder's upload field. */
export async function upload(page: Page, files: string[]): Promise<void> {
  await page.locator('input[type=file][multiple]').setInputFiles(files);
}

/** Waits until the upload panel has folded (every upload finished). */
export async function uploadsDone(page: Page, timeout = 60_000): Promise<void> {
  await page.getByTestId('uploads').locator('button.panel-head[aria-expanded="false"]').waitFor({ timeout });
}

/** Every file below `dir`, depth first. */
export function walk(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** The lowercase base32 shape the server accepts as an encrypted name (docs/vault.md "Names"). */
export const ENCRYPTED_NAME = /^[a-z2-7]{32,255}$/;
