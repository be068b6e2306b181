/**
 * Sharing encrypted folders and files (issue 31), against a real server in
 * Debian's Chromium. Ada (the admin) and Bea each set up a vault in the UI.
 * Ada adds Bea to an encrypted folder in its Members dialog; Bea unlocks and
 * downloads a file Ada uploaded after the share, byte-exact; after Ada removes
 * her, Bea's listing answers 403 `encrypted`. A link to an encrypted file opens
 * in a fresh browser context, which decrypts it (right name, SHA-256, image
 * preview); the same link without its key, with a short key and with another
 * file's key each show their error and never content (the short key fetches
 * nothing); a PIN link decrypts after the PIN form.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { needTool } from '../helpers/tools';
import { ADMIN, ensureRendererBuilt, fileRow, launchBrowser, newPage, shot, signedInPage, startServer, type RunningServer } from './ui-harness';
import { confirmRecoveryKey, createVault, unlockWith, upload, uploadsDone } from './ui-vault-helpers';

const skip = needTool('chromium', 'chromium') ?? undefined;
const BEA = { email: 'bea@example.com', username: 'bea', password: 'bea-pass-12345' };
const BEA_PASSPHRASE = 'bea keeps her own passphrase 9';

const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Chromium logs refused requests: the 401 of a PIN form, the 403 this suite provokes, the 404 of a thumbnail not stored yet. */
const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (401|403|404)/.test(e));

describe('web UI: sharing encrypted folders and files', { skip, timeout: 600_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let ada: Page;
  let bea: Page;
  let adaErrors: string[];
  let beaErrors: string[];
  const visitorErrors: string[][] = [];
  let work: string;
  let token: string;
  const after1 = randomBytes(300_000);
  let photo: Buffer;
  const links: { photo?: string; other?: string; pinned?: string; pin?: string } = {};

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${srv.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };

  /** A stranger: a fresh context with no cookie of anyone signed in. */
  const stranger = async (): Promise<Page> => {
    const ctx = await browser.newContext({ viewport: { width: 1000, height: 760 }, locale: 'en-US', acceptDownloads: true });
    assert.deepEqual(await ctx.cookies(), []);
    const { page, errors } = await newPage(ctx);
    visitorErrors.push(errors);
    return page;
  };

  /** In-app navigation: a page load would forget the unlocked vault (its keys live in the page's memory only). */
  const go = async (page: Page, to: string) => {
    await page.evaluate((p) => {
      history.pushState(null, '', p);
      dispatchEvent(new Event('filedock:navigate'));
    }, to);
    await page.getByTestId('file-list').waitFor();
  };

  /** Opens the row's context menu item in the open folder. */
  const menu = async (page: Page, row: string, item: string) => {
    await fileRow(page, row).click({ button: 'right' });
    await page.getByRole('menuitem', { name: item, exact: true }).click();
  };

  const membersDialog = async () => {
    await go(ada, '/files/home');
    await menu(ada, 'Shared', 'Members…');
    const dlg = ada.getByTestId('vault-members');
    await dlg.getByText('bea', { exact: false }).or(dlg.getByText('admin')).first().waitFor();
    return dlg;
  };

  const folderId = async (): Promise<number> => {
    const r = await ada.evaluate(() => fetch('/api/vault/folders').then((x) => x.json()));
    return (r.folders as Array<{ id: number; path: string }>).find((f) => f.path === '/home/Shared')!.id;
  };

  /** A link page's outcome: the error sentence, or the decrypted name. */
  const linkPage = (page: Page) => page.locator('#vault-link');

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    work = join(srv.dataDir, '..', 'work');
    mkdirSync(work, { recursive: true });
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
    ({ token } = (await login.json()) as { token: string });
    const made = await api('POST', '/api/admin/users', { ...BEA, role: 'user' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    // Bea works in the same storage: only the folder's membership decides whether she reads inside it.
    const home = (await api('GET', '/api/admin/storages')).body.storages.find((x: { name: string }) => x.name === 'home');
    assert.equal((await api('PUT', `/api/admin/storages/${home.id}/grants`, { grants: [{ user_id: made.body.user.id, level: 'editor' }] })).status, 200);
    photo = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#2f7ae0' } })
      .png()
      .toBuffer();
    ({ page: ada, errors: adaErrors } = await signedInPage(browser, srv.url, undefined, { acceptDownloads: true }));
    ({ page: bea, errors: beaErrors } = await signedInPage(browser, srv.url, BEA, { acceptDownloads: true }));
    await createVault(ada, srv.url);
    await confirmRecoveryKey(ada);
    await createVault(bea, srv.url, BEA_PASSPHRASE);
    await confirmRecoveryKey(bea);
    // Made from the Files page's empty-space menu, with the vault still unlocked from its set-up.
    await go(ada, '/files/home');
    const box = (await ada.getByTestId('file-list').boundingBox())!;
    await ada.mouse.click(box.x + box.width / 2, box.y + box.height - 10, { button: 'right' });
    await ada.getByRole('menuitem', { name: 'New encrypted folder' }).click();
    await ada.getByLabel('Folder name').fill('Shared');
    await ada.getByRole('button', { name: 'Create', exact: true }).click();
    await fileRow(ada, 'Shared').getByTestId('lock-mark').waitFor({ timeout: 30_000 });
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('Ada adds Bea in the Members dialog; the dialog says what a change does and does not do', async () => {
    const dlg = await membersDialog();
    await dlg.getByText('A person you add can read the files added from now on. Files already in the folder stay closed to them.').waitFor();
    await dlg.getByText('A person you remove can no longer open the folder, but keeps whatever they downloaded or copied before.').waitFor();
    await dlg.getByLabel('Add a person').fill('bea');
    await dlg.getByRole('list', { name: 'People with a vault' }).getByRole('button', { name: 'Add' }).click();
    await dlg.getByRole('list', { name: 'Members' }).getByText('bea').waitFor();
    await shot(ada, 'ui-vault-members');
    await dlg.getByRole('button', { name: 'Save' }).click();
    await dlg.waitFor({ state: 'detached', timeout: 30_000 });
    const id = await folderId();
    const folder = (await ada.evaluate((i) => fetch(`/api/vault/folders/${i}`).then((x) => x.json()), id)).folder;
    assert.equal(folder.key_version, 2, 'a new key version for the new member set');
    assert.deepEqual(folder.members.map((m: { name: string }) => m.name).sort(), ['admin', 'bea'].sort());
    assert.deepEqual(
      folder.keys.map((k: { version: number }) => k.version),
      [1, 2],
      'Ada keeps every version',
    );
  });

  test('Bea unlocks and reads a file Ada uploaded after the share, byte-exact; she holds only the new key', async () => {
    await go(ada, '/files/home/Shared');
    writeFileSync(join(work, 'after.bin'), after1);
    writeFileSync(join(work, 'photo.png'), photo);
    writeFileSync(join(work, 'other.txt'), 'another file, another key\n');
    await upload(ada, [join(work, 'after.bin'), join(work, 'photo.png'), join(work, 'other.txt')]);
    await uploadsDone(ada);
    await fileRow(ada, 'other.txt').waitFor({ timeout: 30_000 });

    // A page load forgets her keys (set up a moment ago): she unlocks with her passphrase.
    await bea.goto(`${srv.url}/files/home/Shared`);
    await bea.getByTestId('vault-gate').getByRole('button', { name: 'Unlock' }).click();
    await unlockWith(bea, BEA_PASSPHRASE);
    await fileRow(bea, 'after.bin').waitFor({ timeout: 30_000 });
    const dl = bea.waitForEvent('download', { timeout: 60_000 });
    await menu(bea, 'after.bin', 'Download');
    const saved = await dl;
    assert.equal(saved.suggestedFilename(), 'after.bin');
    assert.equal(sha(readFileSync((await saved.path())!)), sha(after1));
    const mine = await bea.evaluate((i) => fetch(`/api/vault/folders/${i}`).then((x) => x.json()), await folderId());
    assert.deepEqual(
      mine.folder.keys.map((k: { version: number }) => k.version),
      [2],
      'a new member gets no key of the files from before',
    );
  });

  test('a link to an encrypted file decrypts in a fresh browser: true name, SHA-256, preview; the server never saw the key', async () => {
    await go(ada, '/files/home/Shared');
    await menu(ada, 'photo.png', 'Share link…');
    const dlg = ada.getByRole('dialog');
    await dlg.getByRole('button', { name: 'Create link' }).click();
    links.photo = await dlg.getByLabel('Link').inputValue();
    assert.match(links.photo, /\/s\/[\w-]+#k=[A-Za-z0-9_-]{43}&n=[A-Za-z0-9_-]+$/);
    await dlg.getByTestId('vault-link-note').getByText('anyone with the whole link can read the file').waitFor();
    await shot(ada, 'ui-vault-share-link');
    await ada.keyboard.press('Escape');
    await menu(ada, 'other.txt', 'Share link…');
    await ada.getByRole('dialog').getByRole('button', { name: 'Create link' }).click();
    links.other = await ada.getByRole('dialog').getByLabel('Link').inputValue();
    await ada.keyboard.press('Escape');

    const page = await stranger();
    const seen: string[] = [];
    page.on('request', (r) => seen.push(r.url()));
    await page.goto(links.photo);
    const root = linkPage(page);
    await root.locator('#vault-link-name', { hasText: 'photo.png' }).waitFor({ timeout: 30_000 });
    const save = root.locator('#vault-link-save');
    await save.waitFor({ timeout: 30_000 });
    assert.equal(await root.locator('#vault-link-facts').getAttribute('data-bytes'), String(photo.length));
    await page.waitForFunction(() => (document.querySelector('#vault-link img') as HTMLImageElement | null)?.naturalWidth === 400);
    await shot(page, 'public-vault-link');
    const dl = page.waitForEvent('download');
    await save.click();
    const saved = await dl;
    assert.equal(saved.suggestedFilename(), 'photo.png');
    assert.equal(sha(readFileSync((await saved.path())!)), sha(photo));
    const key = new URL(links.photo).hash.slice(1);
    assert.ok(!seen.some((u) => u.includes(key.slice(2, 20))), 'no request carried the key');
  });

  test('without its key, with a short key, with another file’s key: each error, never content; a short key fetches nothing', async () => {
    const base = links.photo!.split('#')[0];
    const hash = new URL(links.photo!).hash;
    const otherKey = new URL(links.other!).hash.match(/k=([^&]+)/)![1];
    const cases = [
      { url: base, text: 'This link has no key', fetches: false },
      { url: base + hash.replace(/k=([^&]{20})[^&]*/, 'k=$1'), text: "This link's key is incomplete", fetches: false },
      { url: base + hash.replace(/k=[^&]+/, `k=${otherKey}`), text: 'This file could not be verified', fetches: true },
    ];
    for (const c of cases) {
      const page = await stranger();
      const downloads: string[] = [];
      page.on('request', (r) => {
        if (/[?&]dl=1/.test(r.url())) downloads.push(r.url());
      });
      await page.goto(c.url);
      const alert = linkPage(page).locator('[data-error=true]');
      await alert.waitFor({ timeout: 30_000 });
      assert.match(await alert.innerText(), new RegExp(c.text.replace(/[.*+?^${}()|[\]\\']/g, '.')));
      assert.equal(await linkPage(page).locator('img, pre, iframe, #vault-link-save').count(), 0, 'no content, no Save');
      if (!c.fetches) assert.deepEqual(downloads, [], `${c.text}: nothing fetched`);
      else assert.equal(downloads.length, 1, 'the wrong key is found out on the bytes');
      if (c.fetches) await shot(page, 'public-vault-link-integrity');
    }
  });

  test('a PIN link to an encrypted file decrypts after the PIN form', async () => {
    await go(ada, '/files/home/Shared');
    await menu(ada, 'after.bin', 'Share link…');
    const dlg = ada.getByRole('dialog');
    await dlg.getByLabel('Generate an 8-digit PIN').check();
    await dlg.getByRole('button', { name: 'Create link' }).click();
    links.pinned = await dlg.getByLabel('Link').inputValue();
    links.pin = (await dlg.getByTestId('link-facts').innerText()).match(/PIN: (\d{8})/)![1];
    await ada.keyboard.press('Escape');

    const page = await stranger();
    await page.goto(links.pinned);
    await page.getByLabel('PIN').fill(links.pin);
    await page.getByRole('button', { name: 'Open' }).click();
    const save = linkPage(page).locator('#vault-link-save');
    await save.waitFor({ timeout: 30_000 });
    assert.match(page.url(), /#k=/, 'the key came through the PIN form');
    await linkPage(page).locator('#vault-link-name', { hasText: 'after.bin' }).waitFor();
    const dl = page.waitForEvent('download');
    await save.click();
    assert.equal(sha(readFileSync((await (await dl).path())!)), sha(after1));
  });

  test('after Ada removes Bea, Bea can no longer list the folder (403 encrypted)', async () => {
    const dlg = await membersDialog();
    const row = dlg.getByRole('list', { name: 'Members' }).getByRole('listitem').filter({ hasText: 'bea' });
    await row.getByRole('button', { name: 'Remove' }).click();
    await dlg.getByRole('button', { name: 'Save' }).click();
    await dlg.waitFor({ state: 'detached', timeout: 30_000 });
    const r = await bea.evaluate(() =>
      fetch(`/api/files/manager?path=${encodeURIComponent('/home/Shared')}`, { headers: { accept: 'application/json' } }).then(async (x) => ({
        status: x.status,
        body: await x.json(),
      })),
    );
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'encrypted');
    const id = await folderId();
    const theirs = await bea.evaluate((i) => fetch(`/api/vault/folders/${i}`).then((x) => x.status), id);
    assert.equal(theirs, 404, 'her wrapped keys are gone with the membership');
  });

  test('no console errors beyond the refusals the tests caused', () => {
    assert.deepEqual(realErrors(adaErrors), []);
    assert.deepEqual(realErrors(beaErrors), []);
    for (const errors of visitorErrors) assert.deepEqual(realErrors(errors), []);
  });
});
