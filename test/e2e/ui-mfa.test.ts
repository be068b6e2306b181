/**
 * Two-factor sign-in in Debian's Chromium against a real server: enrol an
 * authenticator app from the page (the code computed with otpauth from the
 * key the page shows), keep the recovery codes, sign out and back in through
 * the second step (a wrong code, then a recovery code), add a passkey with a
 * virtual authenticator (CDP WebAuthn domain) and sign in with it, and an
 * admin's "Reset two-factor". The browser opens `localhost`: WebAuthn needs
 * a secure context, which plain http://localhost is.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { ADMIN, ensureRendererBuilt, launchBrowser, newPage, shot, startServer, type RunningServer, desktopContext } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
/** Chromium logs every refused request; the wrong password re-entered (400) and the wrong code (401) are refused on purpose. */
const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (400|401)/.test(e));

describe('web UI: two-factor sign-in', { skip, timeout: 180_000 }, () => {
  let srv: RunningServer;
  let base: string;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let errors: string[];
  let cdp: CDPSession;
  let authenticatorId: string;
  let secret: string;
  let codes: string[];

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    base = srv.url.replace('127.0.0.1', 'localhost');
    browser = await launchBrowser();
    ctx = await desktopContext(browser);
    ({ page, errors } = await newPage(ctx));
    cdp = await ctx.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    }));
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  const password = async () => {
    await page.getByLabel('E-mail or username').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };
  const signedIn = () => page.getByRole('button', { name: 'Sign out' }).waitFor();
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  };

  test('enrol an authenticator app from the QR page and keep the ten recovery codes', async () => {
    await page.goto(`${base}/files`);
    await password();
    await signedIn();
    assert.equal(await page.evaluate(() => window.isSecureContext), true, 'localhost is a secure context');
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('heading', { name: 'Account security' }).waitFor();
    assert.match(await page.getByTestId('mfa-state').innerText(), /off/);
    await page.getByRole('button', { name: 'Set up authenticator app' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Current password').fill('not-my-password');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.getByText('The current password is wrong.').waitFor();
    await dialog.getByLabel('Current password').fill(ADMIN.password);
    await dialog.getByRole('button', { name: 'Continue' }).click();
    const key = dialog.getByTestId('totp-secret');
    await key.waitFor();
    secret = (await key.innerText()).replace(/\s+/g, '');
    assert.match(secret, /^[A-Z2-7]{32}$/);
    const qr = dialog.getByRole('img', { name: 'QR code for the authenticator app' });
    assert.ok((await qr.evaluate((img: HTMLImageElement) => img.naturalWidth)) >= 200, 'the QR image loaded');
    await shot(page, 'ui-mfa-totp-setup');
    await dialog.getByLabel('Code from the app').fill(TOTP.generate({ secret: Secret.fromBase32(secret) }));
    await dialog.getByRole('button', { name: 'Turn on' }).click();
    const list = page.getByTestId('recovery-codes');
    await list.waitFor();
    codes = (await list.locator('code').allInnerTexts()).map((c) => c.trim());
    assert.equal(codes.length, 10);
    await shot(page, 'ui-mfa-codes');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText(/Two-step sign-in is on/).waitFor();
    assert.match(await page.getByTestId('codes-left').innerText(), /10 unused codes left/);
  });

  test('sign out and in again: the second step asks for the code; the next code of the app signs in', async () => {
    await signOut();
    await password();
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    // The enrolment spent the current step: the app's next code (inside the window) is the one to type.
    await page.getByLabel('Code from your authenticator app').fill(TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + 30_000 }));
    await shot(page, 'ui-mfa-second-step');
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();
  });

  test('a wrong code says how many tries are left; a recovery code signs in once', async () => {
    await signOut();
    await password();
    await page.getByLabel('Code from your authenticator app').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page
      .locator('#mfa-status .error')
      .getByText(/Wrong code\. \d tries left\./)
      .waitFor();
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await page.getByLabel('Recovery code').fill(codes[0]);
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();
    await page.getByRole('link', { name: 'Security' }).click();
    assert.match(await page.getByTestId('codes-left').innerText(), /9 unused codes left/);
  });

  test('add a passkey with a name and sign in with it through the virtual authenticator', async () => {
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Virtual key');
    await dialog.getByLabel('Current password').fill(ADMIN.password);
    await dialog.getByRole('button', { name: 'Create passkey' }).click();
    await page.getByRole('cell', { name: 'Virtual key', exact: true }).waitFor();
    const made = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(made.credentials.length, 1);
    assert.equal(made.credentials[0].rpId, 'localhost');
    await shot(page, 'ui-mfa-security');

    await signOut();
    await password();
    await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
    await shot(page, 'ui-mfa-second-step-passkey');
    // The step speaks Turkish too.
    await page.getByLabel('Language').selectOption('tr');
    await page.getByRole('heading', { name: 'İki adımlı oturum açma' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Geçiş anahtarı kullan' }).count(), 1);
    await page.getByLabel('Dil').selectOption('en');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await signedIn();
    const used = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.ok(used.credentials[0].signCount >= 1, 'the authenticator signed');
    await page.getByRole('link', { name: 'Security' }).click();
    const row = page.getByRole('row', { name: /Virtual key/ });
    await row.waitFor();
    assert.doesNotMatch(await row.innerText(), /Never/, 'last used is shown');
  });

  test('an admin resets two-factor from the user list; the password alone signs in again', async () => {
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('link', { name: 'Users' }).click();
    const row = page.getByRole('row', { name: new RegExp(ADMIN.email) });
    await row.getByText('Two-step').waitFor();
    await row.getByRole('button', { name: 'Reset two-factor' }).click();
    await shot(page, 'ui-mfa-admin-reset');
    await page.getByRole('dialog').getByRole('button', { name: 'Reset two-factor' }).click();
    await page.getByText(`Two-step sign-in reset for ${ADMIN.email}.`).waitFor();
    await row.getByText('Two-step').waitFor({ state: 'detached' });
    await signOut();
    await password();
    await signedIn();
    assert.deepEqual(realErrors(errors), []);
  });
});
