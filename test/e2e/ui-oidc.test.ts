/**
 * Single sign-on in the web UI, in Debian's Chromium against a real server
 * (from source, port 0, OIDC from SERVICE_OIDC_*) and a real OpenID provider
 * on loopback: the button on the sign-in page, the provider's own login and
 * consent pages, landing signed in where the person was going; a refused
 * sign-in shown on the sign-in page; the admin console's OIDC section.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { startIdp, type TestIdp } from '../helpers/oidc-idp';
import { ADMIN, ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer, desktopContext } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const CLIENT = { id: 'filedock-ui', secret: 'ui-client-secret' };

/**
 * Expected console errors: 401s while signed out, the 400 of the refused Test the admin test provokes,
 * and the provider page's web font this test refuses to fetch (ERR_FAILED).
 */
const realErrors = (errors: string[]) =>
  errors.filter((e) => !/Failed to load resource: (the server responded with a status of 40[01]|net::ERR_FAILED)/.test(e));

describe('web UI: single sign-on', { skip, timeout: 180_000 }, () => {
  let idp: TestIdp;
  let srv: RunningServer;
  let browser: Browser;

  /** A fresh browser profile that may reach loopback only (the provider's pages import a web font). */
  const context = async (): Promise<BrowserContext> => {
    const ctx = await desktopContext(browser);
    await ctx.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    return ctx;
  };

  before(async () => {
    ensureRendererBuilt();
    idp = await startIdp({ claimsInIdToken: true });
    idp.accounts.set('alice', { email: 'alice@example.test', email_verified: true, preferred_username: 'alice', groups: ['staff'] });
    idp.accounts.set('admin-twin', { email: ADMIN.email, email_verified: false, preferred_username: 'twin', groups: [] });
    srv = await startServer({
      SERVICE_OIDC_ISSUER: idp.issuer,
      SERVICE_OIDC_CLIENT_ID: CLIENT.id,
      SERVICE_OIDC_CLIENT_SECRET: CLIENT.secret,
      SERVICE_OIDC_LABEL: 'Test IdP',
    });
    await idp.addClient(CLIENT.id, CLIENT.secret, [`${srv.url}/api/auth/oidc/callback`]);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
    await idp?.close();
  });

  test('the button signs in at the provider and lands on the files page that was asked for', async () => {
    const ctx = await context();
    const { page, errors } = await newPage(ctx);
    await page.goto(`${srv.url}/files/home`);
    const button = page.getByRole('link', { name: 'Sign in with Test IdP' });
    await button.waitFor();
    await shot(page, 'oidc-login');
    await button.click();
    // The provider's own pages.
    await page.waitForURL((u) => u.origin === idp.issuer);
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${srv.url}/files/home`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await page.locator('.who').innerText(), 'alice');
    await shot(page, 'oidc-signed-in');
    assert.deepEqual(realErrors(errors), []);
    await ctx.close();
  });

  test('a refused sign-in comes back to the sign-in page with the reason, and the address is cleaned', async () => {
    const ctx = await context();
    const { page } = await newPage(ctx);
    await page.goto(`${srv.url}/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.waitForURL((u) => u.origin === idp.issuer);
    // Same e-mail as the local admin, not verified by the provider: never linked.
    await page.locator('input[name="login"]').fill('admin-twin');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    const msg = page.locator('#login-status .error');
    await msg.waitFor();
    assert.match(await msg.innerText(), /has not confirmed the address/);
    assert.equal(new URL(page.url()).pathname + new URL(page.url()).search, '/');
    await shot(page, 'oidc-refused');
    await ctx.close();
  });

  test('the admin console shows the settings the environment holds, read-only, and Test runs discovery', async () => {
    const ctx = await context();
    const { page, errors } = await newPage(ctx);
    await signIn(page, srv.url);
    await page.goto(`${srv.url}/admin/settings`);
    const section = page.getByRole('region', { name: 'Single sign-on (OIDC)' });
    await section.waitFor();
    const issuer = section.getByLabel('Issuer URL');
    assert.equal(await issuer.inputValue(), idp.issuer);
    assert.equal(await issuer.getAttribute('readonly'), '');
    await section.getByText('Set by SERVICE_OIDC_ISSUER').waitFor();
    assert.match(await section.getByTestId('sso-state').innerText(), /^Status: on\b/);
    // A refusal shows the server's sentence in the section.
    await section.getByLabel('Scopes').fill('email profile');
    await section.getByRole('button', { name: 'Test' }).click();
    await section.getByRole('alert').filter({ hasText: 'scopes' }).waitFor();
    await section.getByLabel('Scopes').fill('openid email profile');
    await section.getByLabel('Admin group').fill('fd-admins');
    await section.getByRole('button', { name: 'Test' }).click();
    await section.getByTestId('sso-found').waitFor();
    assert.match(await section.getByTestId('sso-found').innerText(), new RegExp(idp.issuer.replace(/[.:/]/g, '\\$&')));
    await section.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Settings saved.').waitFor();
    assert.equal(await section.getByRole('alert').count(), 0, 'the earlier refusal is gone');
    await shot(page, 'oidc-admin');
    assert.deepEqual(realErrors(errors), []);
    await ctx.close();
  });
});
