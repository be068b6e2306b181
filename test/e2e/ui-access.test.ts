// Over 60 s in CI (test-timings.json; issue 37): 11 scenarios in Chromium, several with a second browser (another session, a paired phone).
/**
 * Accounts and access in Debian's Chromium against a real server: an API key
 * made on the Sessions & keys page (token shown once, then revoked), signing
 * out the other sessions (a second browser is signed out), pairing a phone
 * (a second, phone-sized browser opens `/pair#<token>`, sees only its folder,
 * uploads into it, is refused elsewhere, forgets the device; a revoked pairing
 * says its key no longer works), a custom role without share links assigned
 * in the user's Access panel (their share is refused with the server's
 * sentence), the exceptions editor round trip, sign-up switched on and off,
 * and the pages in Turkish. No console errors beyond the refusals provoked.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, ARTIFACTS, ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer, desktopContext } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const UMA = { email: 'uma@example.com', username: 'uma', password: 'uma-pass-12345' };
/** Chromium logs every refused request: the signed-out reload (401) and the refusals this suite provokes (400, 403, 429). */
const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (400|401|403|429)/.test(e));
const until = async (what: string, ok: () => boolean, ms = 5000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (ok()) return;
  assert.fail(`timed out waiting for ${what}`);
};

describe('web UI: accounts and access', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let base: string;
  let browser: Browser;
  let desk: Page;
  /** An admin key for set-up calls: unlike a session it survives "sign out all other sessions". */
  let fixtureKey: string;
  let umaId: number;
  const errors: string[][] = [];

  const api = async (method: string, path: string, body?: unknown, token = fixtureKey) => {
    const r = await fetch(`${srv.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };
  const context = async (opts: Parameters<Browser['newContext']>[0] = {}): Promise<{ ctx: BrowserContext; page: Page }> => {
    const ctx = await desktopContext(browser, opts);
    const { page, errors: e } = await newPage(ctx);
    errors.push(e);
    return { ctx, page };
  };
  const accessPage = async (page: Page, query = '') => {
    await page.goto(`${base}/account/access${query}`);
    await page.getByRole('heading', { name: 'Sessions & keys' }).waitFor();
  };
  /** Picks `/home/<name>` in the folder picker opened from `scope`'s "Choose folder…". */
  const chooseFolder = async (scope: Locator, page: Page, name: string) => {
    await scope.getByRole('button', { name: 'Choose folder…' }).click();
    const picker = page.getByRole('dialog', { name: 'Choose folder…' });
    await picker.getByRole('button', { name: 'home', exact: true }).click();
    await picker.getByRole('button', { name, exact: true }).click();
    await picker.getByRole('button', { name: 'Choose this folder' }).click();
    await picker.waitFor({ state: 'detached' });
  };
  /** Runs `act` on the admin's page and waits for the server's answer to the write it sends to `path`. */
  const written = async (path: string, act: () => Promise<unknown>) => {
    const res = desk.waitForResponse((r) => new URL(r.url()).pathname === path && r.request().method() !== 'GET');
    await act();
    assert.equal((await res).status(), 200);
  };
  const pair = async (label: string, writes = true): Promise<string> => {
    const card = desk.getByTestId('pair');
    if (await card.getByRole('button', { name: 'Pair another device' }).count()) await card.getByRole('button', { name: 'Pair another device' }).click();
    await chooseFolder(card, desk, 'Phone');
    assert.equal(await card.getByTestId('key-folder').innerText(), '/home/Phone');
    await card.getByLabel('Name of the device').fill(label);
    await card.getByLabel('Allow uploads and changes in the folder').setChecked(writes);
    await card.getByRole('button', { name: 'Show pairing code' }).click();
    return card.getByTestId('pair-link').inputValue();
  };

  before(async () => {
    ensureRendererBuilt();
    // A small probe budget (2 × 3 sign-up attempts per address) so the sign-up lockout is reached quickly.
    srv = await startServer({ SERVICE_LOGIN_MAX_ATTEMPTS: '3' });
    base = srv.url;
    browser = await launchBrowser();
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const session = ((await login.json()) as { token: string }).token;
    const made = await api('POST', '/api/auth/keys', { name: 'e2e fixture', verbs: ['admin', 'files:read', 'files:write'] }, session);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    fixtureKey = made.body.token;
    await api('POST', '/api/auth/logout', {}, session);
    for (const dir of ['/home/Phone', '/home/Other']) assert.equal((await api('POST', '/api/files/mkdir', { path: dir })).status, 200);
    const form = new FormData();
    form.append('path', '/home/Other');
    form.append('file', new Blob(['not for the phone']), 'secret.txt');
    assert.equal((await fetch(`${base}/api/files/upload`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${fixtureKey}` } })).status, 200);
    const uma = await api('POST', '/api/admin/users', { ...UMA, role: 'user', groups: ['design'] });
    assert.equal(uma.status, 200, JSON.stringify(uma.body));
    umaId = uma.body.user.id;
    // The seeded storage starts closed (issue 39): Uma works in it through an explicit grant.
    const home = (await api('GET', '/api/admin/storages')).body.storages.find((x: { name: string }) => x.name === 'home');
    assert.equal((await api('PUT', `/api/admin/storages/${home.id}/grants`, { grants: [{ user_id: umaId, level: 'editor' }] })).status, 200);
    ({ page: desk } = await context());
    await signIn(desk, base);
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('a new key: what it may do, its folder and lifetime; the token is shown once; revoked, it stops working', async () => {
    await desk.getByRole('link', { name: 'Security' }).click();
    await desk.getByRole('link', { name: 'Sessions & keys' }).click();
    await desk.getByRole('heading', { name: 'Sessions & keys' }).waitFor();
    await desk.getByRole('button', { name: 'New key' }).click();
    const dlg = desk.getByRole('dialog', { name: 'New key' });
    await dlg.getByLabel('Name', { exact: true }).fill('Backup script');
    await dlg.getByLabel(/^Change files/).check();
    await chooseFolder(dlg, desk, 'Phone');
    assert.equal(await dlg.getByTestId('key-folder').innerText(), '/home/Phone');
    await dlg.getByLabel('Expires after').selectOption('30');
    await shot(desk, 'ui-access-new-key');
    await dlg.getByRole('button', { name: 'Create key' }).click();
    const token = await dlg.getByTestId('new-token').inputValue();
    assert.match(token, /^fdk_\d+_[A-Za-z0-9_-]{43}$/);
    await dlg.getByText('you will not see it again').waitFor();
    await shot(desk, 'ui-access-key-token');
    const me = await api('GET', '/api/auth/me', undefined, token);
    assert.deepEqual([me.body.user.key.root, me.body.user.key.verbs], ['/home/Phone', ['files:read', 'files:write']]);
    const days = (Date.parse(me.body.user.key.expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);

    await dlg.getByRole('button', { name: 'I have copied it' }).click();
    await dlg.waitFor({ state: 'detached' });
    const row = desk.getByRole('row', { name: /Backup script/ });
    const text = await row.innerText();
    for (const part of ['Read files, Change files', '/home/Phone', 'Active']) assert.ok(text.includes(part), `${part} in ${text}`);
    const html = await desk.content();
    const at = html.indexOf(token.replace(/^fdk_\d+_/, '')); // the secret may itself hold an underscore
    assert.ok(at < 0, 'the secret is not on the page any more: ' + html.slice(Math.max(0, at - 300), at + 100));
    await shot(desk, 'ui-access-keys');
    await row.getByRole('button', { name: 'Revoke key Backup script' }).click();
    await desk.getByRole('dialog', { name: 'Revoke key Backup script' }).getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('Revoked').waitFor();
    assert.equal((await api('GET', '/api/auth/me', undefined, token)).status, 401);
  });

  test('sign out all other sessions: the second browser is signed out, this one stays', async () => {
    const { page: other } = await context({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' });
    await signIn(other, base);
    await accessPage(desk);
    const sessions = desk.getByTestId('sessions');
    await sessions.getByText('Firefox 128 on Linux').waitFor();
    assert.equal(await sessions.getByText('This device').count(), 1);
    assert.match(await sessions.getByRole('row', { name: /This device/ }).innerText(), /Chrome \d+ on Linux/);
    await shot(desk, 'ui-access-sessions');
    await desk.getByRole('button', { name: 'Sign out all other sessions' }).click();
    await desk.getByRole('dialog').getByRole('button', { name: 'Sign out all other sessions' }).click();
    await desk.getByText('1 other session signed out.').waitFor();
    await sessions.getByText('Firefox 128 on Linux').waitFor({ state: 'detached' });
    await other.reload();
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    await desk.reload();
    await desk.getByRole('button', { name: 'Sign out' }).first().waitFor();
  });

  test('pair a phone: the QR link goes to the LAN address; a loopback page says a phone cannot reach it', async () => {
    const lan = `http://192.168.1.20:${new URL(base).port}`;
    await accessPage(desk, `?pair=1&base=${encodeURIComponent(lan)}`);
    const card = desk.getByTestId('pair');
    assert.equal(await card.getByTestId('pair-loopback').count(), 0);
    await card.getByText(`The phone will open ${lan}.`).waitFor();
    const link = await pair('Test phone');
    assert.match(link, new RegExp(`^${lan}/pair#fdk_\\d+_[A-Za-z0-9_-]{43}$`));
    const qr = card.getByRole('img', { name: 'QR code to pair a phone' });
    await qr.waitFor();
    assert.ok((await qr.evaluate((img: HTMLImageElement) => img.naturalWidth)) >= 200, 'the QR image loaded');
    await card.screenshot({ path: join(ARTIFACTS, 'ui-access-pair.png') });
    // A stranger's base is ignored; this page's own (loopback) address gets the warning.
    await accessPage(desk, '?pair=1&base=https%3A%2F%2Fevil.example.com');
    await card.getByTestId('pair-loopback').waitFor();
    await card.getByText(`The phone will open ${base}.`).waitFor();
  });

  test('device mode: the phone keeps the key, sees only its folder, uploads there, is refused elsewhere, forgets the device', async () => {
    await accessPage(desk);
    const token = (await pair('My phone')).split('#')[1];
    const { page: phone } = await context({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, acceptDownloads: true });
    await phone.goto(`${base}/pair#${token}`);
    const strip = phone.getByTestId('device-strip');
    await strip.waitFor();
    assert.match(await strip.innerText(), /^Paired device: \/home\/Phone, until /);
    assert.equal(phone.url(), `${base}/files/home/Phone`, 'the token left the address bar');
    assert.equal(await phone.evaluate(() => localStorage.getItem('filedock.device_key')), token);
    for (const link of ['Admin', 'My links', 'Security', 'Trash']) assert.equal(await phone.getByRole('link', { name: link }).count(), 0, link);
    await phone.getByText('This folder is empty').waitFor();

    await phone
      .locator('input[type=file][multiple]')
      .setInputFiles({ name: 'from-phone.txt', mimeType: 'text/plain', buffer: Buffer.from('written by the phone') });
    const onDisk = join(srv.dataDir, 'Phone', 'from-phone.txt');
    await until('the upload on disk', () => existsSync(onDisk));
    assert.equal(readFileSync(onDisk, 'utf8'), 'written by the phone');
    await phone.getByRole('option', { name: /from-phone\.txt/ }).waitFor();
    // The folder's event stream (read over fetch with the key) shows a folder made elsewhere without a reload.
    assert.equal((await api('POST', '/api/files/mkdir', { path: '/home/Phone/from-desk' })).status, 200);
    await phone.getByRole('option', { name: /from-desk/ }).waitFor({ timeout: 5000 });
    // Bytes the browser loads by itself (a preview, a download) come with the key too.
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3060c0' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('path', '/home/Phone');
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'blue.png');
    assert.equal((await fetch(`${base}/api/files/upload`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${fixtureKey}` } })).status, 200);
    await phone.getByRole('option', { name: /blue\.png/ }).click();
    const img = phone.getByTestId('preview').getByRole('img', { name: 'blue.png' });
    await img.waitFor();
    await phone.waitForFunction(() => (document.querySelector('[data-testid=preview] img') as HTMLImageElement | null)?.naturalWidth === 64);
    assert.match((await img.getAttribute('src')) ?? '', /^blob:/);
    const [download] = await Promise.all([phone.waitForEvent('download'), phone.getByRole('dialog').getByRole('link', { name: 'Download' }).click()]);
    assert.equal(download.suggestedFilename(), 'blue.png');
    assert.deepEqual(readFileSync((await download.path())!), png);
    await phone.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await shot(phone, 'ui-access-device');

    // On the way up only the way down shows; a sibling folder is refused with the server's sentence.
    await phone.goto(`${base}/files/home`);
    await phone.getByRole('option', { name: /Phone/ }).waitFor();
    assert.deepEqual(await phone.getByRole('listbox').getByRole('option').allInnerTexts(), ['Phone'], 'Other is not listed');
    await phone.goto(`${base}/files/home/Other`);
    await phone
      .getByRole('alert')
      .getByText(/Permission denied/)
      .waitFor();
    await shot(phone, 'ui-access-device-refused');

    await phone.getByRole('button', { name: 'Forget this device' }).click();
    await phone.getByRole('dialog').getByRole('button', { name: 'Forget this device' }).click();
    await phone.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await phone.evaluate(() => localStorage.getItem('filedock.device_key')), null);
  });

  test('a read-only pairing offers no uploads; revoked, the phone says its key no longer works and drops it', async () => {
    await accessPage(desk);
    const token = (await pair('Old phone', false)).split('#')[1];
    const { page: phone } = await context({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.goto(`${base}/pair#${token}`);
    await phone.getByTestId('device-strip').waitFor();
    await phone.getByRole('option', { name: /from-phone\.txt/ }).waitFor();
    assert.equal(await phone.locator('input[type=file][multiple]').isDisabled(), true, 'no uploads without files:write');
    const row = desk.getByRole('row', { name: /Old phone/ });
    await row.getByRole('button', { name: 'Revoke key Old phone' }).click();
    await desk.getByRole('dialog', { name: 'Revoke key Old phone' }).getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('Revoked').waitFor();
    await phone.reload();
    await phone.getByText('This device’s key no longer works').waitFor();
    assert.equal(await phone.evaluate(() => localStorage.getItem('filedock.device_key')), null);
  });

  test("roles: a role without share links, assigned in the Access panel, refuses the person's share with the server's sentence", async () => {
    await desk.goto(`${base}/admin/roles`);
    await desk.getByRole('button', { name: 'New role' }).click();
    const dlg = desk.getByRole('dialog', { name: 'New role' });
    await dlg.getByLabel('Name', { exact: true }).fill('No links');
    await dlg.getByLabel('Share links').selectOption('deny');
    await dlg.getByRole('button', { name: 'Save' }).click();
    const role = desk.getByRole('row', { name: /No links/ });
    await role.getByText('Share links: denied').waitFor();
    assert.match(
      await desk
        .getByTestId('matrix')
        .getByRole('row', { name: /Change files/ })
        .innerText(),
      /allowed\s+allowed\s+denied/,
    );
    await shot(desk, 'ui-access-roles');

    await desk.goto(`${base}/admin/users`);
    await desk
      .getByRole('row', { name: new RegExp(UMA.email) })
      .getByRole('button', { name: 'Access' })
      .click();
    const panel = desk.getByRole('dialog', { name: `Access of ${UMA.email}` });
    await panel.getByText('Groups: design').waitFor();
    await written(`/api/admin/users/${umaId}`, () => panel.getByLabel('Custom role').selectOption({ label: 'No links' }));
    assert.equal((await api('GET', `/api/admin/users/${umaId}`)).body.user.custom_role_id !== null, true);

    const { page: uma } = await context();
    await signIn(uma, base, UMA);
    await uma.goto(`${base}/files/home/Other`);
    await uma.getByRole('option', { name: /secret\.txt/ }).click();
    await uma.getByRole('button', { name: 'Share link…' }).click();
    const share = uma.getByRole('dialog');
    await share.getByRole('button', { name: 'Create link' }).click();
    await share.getByRole('alert').getByText('Permission denied (shares:write).').waitFor();
    await desk.goto(`${base}/admin/roles`);
    assert.match(await desk.getByRole('row', { name: /No links/ }).innerText(), /\b1\b/, 'one member');
  });

  test('exceptions editor: inherit / allow / deny round trip, each "inherit" saying where it comes from', async () => {
    await desk.goto(`${base}/admin/users`);
    await desk
      .getByRole('row', { name: new RegExp(UMA.email) })
      .getByRole('button', { name: 'Access' })
      .click();
    let panel = desk.getByRole('dialog', { name: `Access of ${UMA.email}` });
    const write = panel.getByLabel('Change files');
    await write.waitFor();
    assert.equal(await write.locator('option[value=""]').innerText(), 'Inherit (built-in role User: allowed)');
    assert.equal(await panel.getByLabel('Share links').locator('option[value=""]').innerText(), 'Inherit (role “No links”: denied)');
    await write.selectOption('deny');
    await panel.getByLabel('Share links').selectOption('allow');
    await written(`/api/admin/users/${umaId}/permissions`, () => panel.getByRole('button', { name: 'Save exceptions' }).click());
    assert.deepEqual((await api('GET', `/api/admin/users/${umaId}/permissions`)).body.permissions, { 'files:write': false, 'shares:write': true });
    await shot(desk, 'ui-access-user');
    await panel.getByRole('button', { name: 'Close' }).first().click();
    await desk.reload();
    await desk
      .getByRole('row', { name: new RegExp(UMA.email) })
      .getByRole('button', { name: 'Access' })
      .click();
    panel = desk.getByRole('dialog', { name: `Access of ${UMA.email}` });
    assert.equal(await panel.getByLabel('Change files').inputValue(), 'deny');
    assert.equal(await panel.getByLabel('Share links').inputValue(), 'allow');
    await panel.getByLabel('Change files').selectOption({ value: '' });
    await panel.getByLabel('Share links').selectOption({ value: '' });
    assert.deepEqual([await panel.getByLabel('Change files').inputValue(), await panel.getByLabel('Share links').inputValue()], ['', '']);
    await written(`/api/admin/users/${umaId}/permissions`, () => panel.getByRole('button', { name: 'Save exceptions' }).click());
    assert.deepEqual((await api('GET', `/api/admin/users/${umaId}/permissions`)).body.permissions, {});
    await panel.getByRole('button', { name: 'Close' }).first().click();

    // Deleting the role (confirmed) returns its member to the built-in role.
    await desk.goto(`${base}/admin/roles`);
    await desk
      .getByRole('row', { name: /No links/ })
      .getByRole('button', { name: 'Delete' })
      .click();
    await desk.getByRole('dialog').getByText('Its member goes back to their built-in role.').waitFor();
    await desk.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await desk.getByText('No custom roles yet.').waitFor();
    assert.equal((await api('GET', `/api/admin/users/${umaId}`)).body.user.custom_role_id, null);
  });

  test('sign-up: offered only while allowed; field errors from the server; a new account is signed in', async () => {
    const { page: visitor } = await context();
    await visitor.goto(`${base}/`);
    await visitor.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await visitor.getByRole('link', { name: 'Create an account' }).count(), 0);

    await desk.goto(`${base}/admin/settings`);
    await written('/api/admin/auth/settings', () => desk.getByLabel('Allow anyone to sign up').check());
    await visitor.reload();
    await visitor.getByRole('link', { name: 'Create an account' }).click();
    await visitor.getByRole('heading', { name: 'Create an account' }).waitFor();
    assert.equal(new URL(visitor.url()).pathname, '/signup');
    await visitor.getByLabel('E-mail').fill(UMA.email);
    await visitor.getByLabel('Password').fill('new-pass-12345');
    await visitor.getByRole('button', { name: 'Create account' }).click();
    await visitor.getByTestId('signup-email-note').getByText('This e-mail address is already in use.').waitFor();
    await visitor.getByLabel('E-mail').fill('new@example.com');
    await visitor.getByLabel('Password').fill('short');
    await visitor.getByRole('button', { name: 'Create account' }).click();
    await visitor.locator('#signup-password-note.error').waitFor();
    assert.equal(await visitor.getByLabel('Password').getAttribute('aria-invalid'), 'true');
    await shot(visitor, 'ui-access-signup');
    await visitor.getByLabel('Password').fill('new-pass-12345');
    await visitor.getByRole('button', { name: 'Create account' }).click();
    await visitor.getByRole('button', { name: 'Sign out' }).waitFor();
    // A new person lands in their own home folder (issue 39, 2), made when sign-up made the account.
    await visitor.waitForURL((u) => /^\/files\/home\/Users\/[^/]+$/.test(u.pathname));

    // Every attempt spends from the address's budget: past it, the same countdown as sign-in.
    const { page: pest } = await context();
    await pest.goto(`${base}/signup`);
    const submit = pest.getByRole('button', { name: 'Create account' });
    for (let i = 0; i < 6 && !(await pest.getByTestId('lockout').count()); i++) {
      await pest.getByLabel('E-mail').fill(`pest${i}@example.com`);
      await pest.getByLabel('Password').fill('short');
      await submit.click();
      await pest.locator('#signup-password-note.error').or(pest.getByTestId('lockout')).waitFor();
      await pest.waitForFunction(() => !document.querySelector('button[type=submit][disabled]') || !!document.querySelector('[data-testid=lockout]'));
    }
    const lock = pest.getByTestId('lockout');
    await lock.waitFor();
    assert.equal(await submit.isDisabled(), true);
    const first = Number(/(\d+) s/.exec(await lock.innerText())?.[1]);
    await pest.waitForFunction((n) => Number(/(\d+) s/.exec(document.querySelector('[data-testid=lockout]')?.textContent ?? '')?.[1]) < n, first, {
      timeout: 3000,
    });

    await written('/api/admin/auth/settings', () => desk.getByLabel('Allow anyone to sign up').uncheck());
    const { page: late } = await context();
    await late.goto(`${base}/signup`);
    await late.getByText('Sign-up is off on this server.').waitFor();
    await late.goto(`${base}/`);
    await late.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await late.getByRole('link', { name: 'Create an account' }).count(), 0);
  });

  test('the pages speak Turkish; nothing failed in any browser beyond the refusals provoked', async () => {
    await accessPage(desk);
    await desk.getByLabel('Language').selectOption('tr');
    await desk.getByRole('heading', { name: 'Oturumlar ve anahtarlar' }).waitFor();
    for (const s of ['Yeni anahtar', 'Diğer tüm oturumları kapat', 'Eşleştirme kodunu göster'])
      assert.equal(await desk.getByRole('button', { name: s }).count(), 1, s);
    await desk.goto(`${base}/admin/roles`);
    await desk.getByRole('heading', { name: 'Yerleşik rollerin izinleri' }).waitFor();
    await desk.getByLabel('Dil').selectOption('en');
    await desk.getByRole('heading', { name: 'Permissions of the built-in roles' }).waitFor();
    assert.deepEqual(errors.flatMap(realErrors), []);
  });
});
