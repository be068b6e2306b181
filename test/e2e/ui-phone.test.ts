// Over 60 s in CI (test-timings.json; issue 37): 8 scenarios in Chromium on several servers (set-up page, phone gestures through CDP).
/**
 * The first screen and the phone (issue 39, items 9, 10 and 20), against real
 * servers from source in Debian's Chromium: the set-up page's first storage
 * and what an empty top level says; a one-row header and toolbar on a
 * 390x844 phone; selection mode entered by a long press made of real CDP
 * touch events, then taps, and an action bar doing the real actions (checked
 * on disk).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { needTool, tempDir } from '../helpers/tools';
import { spawnServer, type ChildServer } from '../helpers/child-server';
import { ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer, desktopContext } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (401|404)\b/.test(e));
const PHONE = { viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true, acceptDownloads: true } as const;

/** Polls `check` until it holds (a generous bound, never a fixed sleep). */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('first run: a first storage at set-up, helpful empty top levels', { skip, timeout: 180_000 }, () => {
  let srv: ChildServer;
  let browser: Browser;
  const tmp = tempDir('filedock-firstrun-');
  const home = join(tmp.dir, 'home');

  before(async () => {
    ensureRendererBuilt();
    mkdirSync(home);
    // No admin and no storage variables: the fresh-clone start. HOME decides the suggested folder.
    srv = await spawnServer({
      HOME: home,
      SERVICE_DATA_DIR: join(tmp.dir, 'data'),
      SERVICE_ADMIN_EMAIL: '',
      SERVICE_ADMIN_PASSWORD: '',
      SERVICE_DEFAULT_STORAGE_DRIVER: '',
      SERVICE_DEFAULT_STORAGE_PATH: '',
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    tmp.cleanup();
  });

  test('the set-up page offers ~/Filedock, makes it, and the first screen lists it', async () => {
    const phone = await browser.newContext(PHONE);
    const { page: p } = await newPage(phone);
    await p.goto(srv.url);
    await p.getByRole('heading', { name: 'Create the administrator account' }).waitFor();
    assert.equal(await p.getByLabel('Folder for your files').inputValue(), join(home, 'Filedock'));
    await shot(p, 'ui-setup-first-storage-phone');
    await phone.close();

    const ctx = await desktopContext(browser);
    const { page, errors } = await newPage(ctx);
    await page.goto(srv.url);
    await page.getByLabel('E-mail').fill('owner@example.com');
    await page.getByLabel('Username').fill('owner');
    await page.getByLabel('Password', { exact: true }).fill('owner-pass-1234');
    await page.getByLabel('Repeat the password').fill('owner-pass-1234');
    await shot(page, 'ui-setup-first-storage');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByTestId('file-list').getByRole('option', { name: /Files/ }).waitFor();
    assert.ok(existsSync(join(home, 'Filedock')), 'the folder was made');
    await shot(page, 'ui-first-screen');
    assert.deepEqual(realErrors(errors), []);
    await ctx.close();
  });

  test('a person with nothing shared is told so; an admin with no storage is shown where to add one', async () => {
    const ctx = await desktopContext(browser);
    const { page } = await newPage(ctx);
    await signIn(page, srv.url, { email: 'owner@example.com', password: 'owner-pass-1234' });
    const api = (method: string, path: string, body?: unknown) =>
      page.evaluate(
        async ([m, u, b]) => {
          const r = await fetch(u as string, {
            method: m as string,
            headers: { 'Content-Type': 'application/json' },
            body: b === undefined ? undefined : JSON.stringify(b),
          });
          return { status: r.status, body: await r.json().catch(() => null) };
        },
        [method, path, body] as const,
      );
    // Homes off: with one, Bea would pass through to her own folder (issue 39, 2); this is the nothing-at-all case.
    assert.equal((await api('PATCH', '/api/admin/homes', { enabled: false })).status, 200);
    assert.equal((await api('POST', '/api/admin/users', { email: 'bea@example.com', username: 'bea', password: 'bea-pass-12345', role: 'user' })).status, 200);
    const storages = (await api('GET', '/api/admin/storages')).body.storages as Array<{ id: number }>;
    assert.equal((await api('PATCH', `/api/admin/storages/${storages[0].id}`, { rbac_enabled: true })).status, 200);

    const phone = await browser.newContext(PHONE);
    const { page: bea } = await newPage(phone);
    await signIn(bea, srv.url, { email: 'bea@example.com', password: 'bea-pass-12345' });
    await bea.getByText('Nothing is shared with you yet.').waitFor();
    assert.equal(await bea.getByRole('link', { name: 'Add a storage' }).count(), 0);
    await shot(bea, 'ui-empty-user-phone');
    await phone.close();

    assert.equal((await api('DELETE', `/api/admin/storages/${storages[0].id}`)).status, 200);
    await page.goto(`${srv.url}/files`);
    await page.getByText('No storage yet.', { exact: false }).waitFor();
    await shot(page, 'ui-empty-admin');
    await page.getByRole('link', { name: 'Add a storage' }).click();
    await page.waitForURL(/\/admin\/storages$/);
    await ctx.close();
  });
});

describe('phone: one-row header and toolbar, selection mode with touch', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let phone: BrowserContext;
  let page: Page;
  let errors: string[];
  const list = () => page.getByTestId('file-list');
  const row = (name: string) => list().getByRole('option', { name: new RegExp(`^\\S*\\s*${name.replace(/[.]/g, '\\.')}\\b`) });
  const bar = () => page.getByRole('toolbar', { name: 'Selected items' });
  const selected = async (name: string) => (await row(name).getAttribute('aria-selected')) === 'true';

  /** A touch held on `target` (CDP touch events, as a finger makes them) until the row is selected, then lifted. */
  const longPress = async (target: Locator, name: string) => {
    const cdp = await phone.newCDPSession(page);
    const box = (await target.boundingBox())!;
    const point = { x: box.x + box.width / 3, y: box.y + box.height / 2 };
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [point] });
    await until(`${name} selected by the held touch`, () => selected(name));
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    await cdp.detach();
  };

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    for (const n of ['alpha.txt', 'bravo.txt', 'charlie.txt', 'delta.txt']) writeFileSync(join(srv.dataDir, n), `${n} bytes`);
    mkdirSync(join(srv.dataDir, 'docs'));
    browser = await launchBrowser();
    phone = await browser.newContext(PHONE);
    ({ page, errors } = await newPage(phone));
    await signIn(page, srv.url);
    errors.length = 0;
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('the header is one row with a menu; the list starts within the first quarter of the screen', async () => {
    await page.goto(`${srv.url}/files/home`);
    await row('alpha.txt').waitFor();
    const first = (await list().getByRole('option').first().boundingBox())!;
    assert.ok(first.y <= 844 / 4, `first row at ${first.y}px, more than a quarter of 844`);
    const header = (await page.locator('header.topbar').boundingBox())!;
    assert.ok(header.height <= 56, `header ${header.height}px tall`);
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).isVisible(), false);
    await shot(page, 'ui-phone-files');
    console.log(`# phone 390x844: header ${header.height}px, first row top ${first.y}px`);

    await page.getByRole('button', { name: 'Menu' }).tap();
    const nav = page.getByRole('navigation', { name: 'Menu' });
    for (const link of ['Files', 'My links', 'Trash', 'Security', 'Admin']) assert.ok(await nav.getByRole('link', { name: link }).isVisible(), link);
    assert.ok(await page.getByRole('combobox', { name: 'Language' }).isVisible());
    assert.ok(await page.getByRole('button', { name: 'Theme' }).isVisible());
    assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible());
    await shot(page, 'ui-phone-menu-open');
    await nav.getByRole('link', { name: 'Trash' }).tap();
    await page.waitForURL(/\/trash$/);
    assert.equal(await nav.isVisible(), false, 'following a link closes the menu');
    await page.getByRole('button', { name: 'Menu' }).tap();
    await page.keyboard.press('Escape');
    assert.equal(await nav.isVisible(), false);
  });

  test('a long press selects without opening; taps add and remove; the bar renames, copies and moves on disk', async () => {
    await page.goto(`${srv.url}/files/home`);
    await row('alpha.txt').waitFor();
    await longPress(row('alpha.txt'), 'alpha.txt');
    await bar().getByText('1 selected').waitFor();
    assert.equal(await page.getByTestId('preview').count(), 0, 'no preview opened');
    assert.match(page.url(), /\/files\/home$/);
    await row('bravo.txt').tap();
    await bar().getByText('2 selected').waitFor();
    assert.equal(await bar().getByRole('button', { name: 'Rename' }).isDisabled(), true, 'two rows cannot be renamed');
    await shot(page, 'ui-phone-selection');
    await row('bravo.txt').tap();
    await bar().getByText('1 selected').waitFor();

    await bar().getByRole('button', { name: 'Rename' }).tap();
    const rename = page.getByRole('dialog');
    await rename.getByLabel('New name').fill('alpha-renamed.txt');
    await rename.getByRole('button', { name: 'Rename' }).tap();
    await until('the rename on disk', () => existsSync(join(srv.dataDir, 'alpha-renamed.txt')));
    assert.equal(existsSync(join(srv.dataDir, 'alpha.txt')), false);
    await row('alpha-renamed.txt').waitFor();

    await bar().getByRole('button', { name: 'Clear selection' }).tap();
    await bar().waitFor({ state: 'detached' });
    await longPress(row('bravo.txt'), 'bravo.txt');
    await bar().getByRole('button', { name: 'Copy' }).tap();
    const picker = page.getByRole('dialog');
    await picker.getByRole('button', { name: /docs/ }).tap();
    await picker.getByRole('button', { name: 'Choose this folder' }).tap();
    await until('the copy on disk', () => existsSync(join(srv.dataDir, 'docs', 'bravo.txt')));
    assert.equal(readFileSync(join(srv.dataDir, 'bravo.txt'), 'utf8'), 'bravo.txt bytes');

    if (await bar().isVisible()) await bar().getByRole('button', { name: 'Clear selection' }).tap();
    await longPress(row('delta.txt'), 'delta.txt');
    await bar().getByText('1 selected').waitFor();
    await bar().getByRole('button', { name: 'Move' }).tap();
    await picker.getByRole('button', { name: /docs/ }).tap();
    await picker.getByRole('button', { name: 'Choose this folder' }).tap();
    await until('the move on disk', () => existsSync(join(srv.dataDir, 'docs', 'delta.txt')) && !existsSync(join(srv.dataDir, 'delta.txt')));
    await row('delta.txt').waitFor({ state: 'detached' });
  });

  test('the row ⋯ button selects that row; share, download and delete work from the bar', async () => {
    await page.goto(`${srv.url}/files/home`);
    await row('charlie.txt').waitFor();
    await page.getByLabel('Actions for charlie.txt').tap();
    await bar().getByText('1 selected').waitFor();
    assert.equal(await selected('charlie.txt'), true);

    await bar().getByRole('button', { name: 'Share' }).tap();
    await page.getByRole('dialog', { name: 'Share “charlie.txt”' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    const [download] = await Promise.all([page.waitForEvent('download'), bar().getByRole('button', { name: 'Download' }).tap()]);
    assert.equal(download.suggestedFilename(), 'charlie.txt');
    assert.equal(readFileSync((await download.path())!, 'utf8'), 'charlie.txt bytes');

    await bar().getByRole('button', { name: 'Delete' }).tap();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).tap();
    await until('the delete on disk', () => !existsSync(join(srv.dataDir, 'charlie.txt')));
    await row('charlie.txt').waitFor({ state: 'detached' });
    await bar().waitFor({ state: 'detached' });
    // Out of selection mode a tap opens again.
    await row('docs').tap();
    await page.waitForURL(/\/files\/home\/docs$/);
  });

  test('wide screens: the toolbar buttons carry icons beside their labels', async () => {
    const ctx = await desktopContext(browser);
    const { page: desk } = await newPage(ctx);
    await signIn(desk, srv.url);
    await desk.goto(`${srv.url}/files/home`);
    await desk.getByTestId('file-list').getByRole('option').first().waitFor();
    for (const name of [/^New folder$/, /^New text file$/, /^Download$/, /^Share link/, /^Move to/, /^Copy to/, /^Delete$/]) {
      const b = desk.getByRole('button', { name });
      const icon = (await b.locator('svg').boundingBox())!;
      const box = (await b.boundingBox())!;
      assert.ok(icon && icon.x < box.x + box.width / 2 && icon.width >= 14, `${name} has an icon at its start`);
    }
    assert.equal(await desk.getByRole('button', { name: 'Menu' }).isVisible(), false);
    assert.ok(await desk.getByRole('button', { name: 'Sign out' }).isVisible());
    await shot(desk, 'ui-desktop-toolbar-icons');
    await ctx.close();
  });

  test('no console errors', () => {
    assert.deepEqual(realErrors(errors), []);
  });
});
