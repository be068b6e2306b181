/**
 * Admin → Storages → Access in Debian's Chromium (issue 39, item 2): people
 * and groups are picked by name or e-mail as one types (no numeric ids),
 * each with a level, and removed; the dialog fits a 1366x768 laptop and a
 * 390x844 phone without sideways scrolling. A new person lands in their home
 * folder. Screenshots: docs/screenshots/ui-storage-access-*.png, ui-home-landing-phone.png.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const DOCS = join(process.cwd(), 'docs', 'screenshots');
const PEOPLE = [
  { email: 'selin.kaya@example.com', username: 'selin', groups: ['family'] },
  { email: 'tom@example.com', username: 'tom', groups: ['family'] },
  { email: 'grandma.ayse@example.com', username: 'ayse', groups: [] },
  { email: 'cousin.deniz.with.a.very.long.address@example-household.org', username: 'deniz', groups: ['friends'] },
];
const PASSWORD = 'person-pass-123';

describe('web UI: storage access picker and home folders', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let token: string;
  const ids: Record<string, number> = {};
  let storageId: number;
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${srv.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };
  const keep = (page: Page, name: string) =>
    shot(page, name).then((p) => {
      mkdirSync(DOCS, { recursive: true });
      copyFileSync(p, join(DOCS, `${name}.png`));
    });
  /** The dialog fits the viewport and nothing in it scrolls sideways. */
  const fits = async (page: Page) => {
    const dialog = page.getByRole('dialog', { name: 'Access: home' });
    const box = (await dialog.boundingBox())!;
    const vp = page.viewportSize()!;
    assert.ok(
      box.x >= 0 && box.y >= 0 && box.x + box.width <= vp.width + 0.5 && box.y + box.height <= vp.height + 0.5,
      `dialog ${JSON.stringify(box)} within ${JSON.stringify(vp)}`,
    );
    const overflow = await dialog.evaluate((d) =>
      [...d.querySelectorAll('*')].some((el) => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible'),
    );
    assert.equal(overflow, false, 'nothing inside scrolls sideways');
  };
  const openAccess = async (page: Page) => {
    await page.goto(`${srv.url}/admin/storages`);
    await page.getByRole('row', { name: /home/ }).getByRole('button', { name: 'Access' }).click();
    const dialog = page.getByRole('dialog', { name: 'Access: home' });
    await dialog.getByRole('button', { name: 'Save' }).waitFor();
    return dialog;
  };
  const waitFor = async (what: string, ok: () => Promise<boolean>) => {
    for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) if (await ok()) return;
    assert.fail(`timed out waiting for ${what}`);
  };

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    browser = await launchBrowser();
    token = (
      (await (
        await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
      ).json()) as { token: string }
    ).token;
    for (const p of PEOPLE) {
      const r = await api('POST', '/api/admin/users', { ...p, password: PASSWORD, role: 'user' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids[p.username] = r.body.user.id;
    }
    storageId = (await api('GET', '/api/admin/storages')).body.storages.find((s: { name: string }) => s.name === 'home').id;
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('laptop: pick a person by name and a group, set levels, save; the list shows names, never ids', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'en-US' });
    const { page, errors } = await newPage(ctx);
    await signIn(page, srv.url);
    errors.length = 0; // the signed-out first load's session probe answers 401
    const dialog = await openAccess(page);
    assert.equal(await dialog.getByRole('checkbox', { name: /Only the people and groups below/ }).isChecked(), true, 'the seeded storage starts closed');
    await dialog.getByText('Only admins.').waitFor();
    const search = dialog.getByRole('combobox', { name: 'Add a person or group' });
    await search.fill('seli');
    await dialog.getByRole('option', { name: /selin\s+selin\.kaya@example\.com/ }).click();
    await search.fill('example-household');
    await dialog.getByRole('option', { name: /deniz/ }).click();
    await dialog.getByLabel('Level', { exact: true }).selectOption('viewer');
    await search.fill('fam');
    await dialog.getByRole('option', { name: /family\s+group · 2 members/ }).click();
    await search.fill('zzz');
    await dialog.getByText('Nobody matches. Admins always have access.').waitFor();
    await search.fill('');
    await dialog.getByLabel('Level: deniz').selectOption('viewer');
    assert.equal(await dialog.locator('input[type=number]').count(), 0, 'no numeric ids to type');
    await dialog.getByText('4 home folders on this storage are private to their owners (not listed here).').waitFor();
    await fits(page);
    await keep(page, 'ui-storage-access-desktop');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const g = (await api('GET', `/api/admin/storages/${storageId}/grants`)).body.grants.filter((x: { path: string }) => x.path === '');
    assert.deepEqual(
      g.map((x: any) => [x.user_id, x.group, x.level]),
      [
        [ids.selin, null, 'editor'],
        [ids.deniz, null, 'viewer'],
        [null, 'family', 'viewer'],
      ],
    );
    assert.equal((await api('GET', `/api/admin/storages/${storageId}/grants`)).body.grants.length, 7, 'the four home grants stay');

    // Reopened: names and e-mails; remove the group.
    const again = await openAccess(page);
    await again.getByText('selin.kaya@example.com').waitFor();
    await again.getByRole('button', { name: 'Remove: family' }).click();
    await again.getByRole('button', { name: 'Save' }).click();
    await again.waitFor({ state: 'hidden' });
    await waitFor(
      'the group removed',
      async () => (await api('GET', `/api/admin/storages/${storageId}/grants`)).body.grants.filter((x: any) => x.path === '').length === 2,
    );
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  test('phone: the dialog fits 390x844 and stacks each grant', async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true, deviceScaleFactor: 2 });
    const { page, errors } = await newPage(ctx);
    await signIn(page, srv.url);
    errors.length = 0; // the signed-out first load's session probe answers 401
    const dialog = await openAccess(page);
    await dialog.getByRole('combobox', { name: 'Add a person or group' }).fill('o');
    await dialog.getByRole('option', { name: /tom/ }).waitFor();
    await fits(page);
    await keep(page, 'ui-storage-access-phone');
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  test('settings: the home folder section; a new person lands in their home', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'en-US' });
    const { page } = await newPage(ctx);
    await signIn(page, srv.url);
    await page.goto(`${srv.url}/admin/settings`);
    const section = page.getByRole('region', { name: 'Home folders' });
    await section.getByRole('checkbox', { name: 'Give every new person a private home folder' }).waitFor();
    assert.equal(await section.getByLabel('Folder for homes').inputValue(), 'Users');
    await section.scrollIntoViewIfNeeded();
    await keep(page, 'ui-home-settings-desktop');
    await ctx.close();

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true, deviceScaleFactor: 2 });
    const { page: p } = await newPage(phone);
    await signIn(p, srv.url, { email: 'ayse', password: PASSWORD });
    await waitFor('the home route', async () => decodeURIComponent(new URL(p.url()).pathname) === '/files/home/Users/ayse');
    await keep(p, 'ui-home-landing-phone');
    await phone.close();
  });
});
