/**
 * OIDC sign-in end to end against a real OpenID provider (oidc-provider on
 * loopback, PKCE required, profile claims served by userinfo): settings and
 * discovery, the code flow, the account mapping (groups, admin group, links),
 * and every refusal: foreign, reused and expired state, IdP errors, a reused
 * and an expired code, a tampered ID token, disabled accounts, open redirects.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { loadConfig } from '../../server/config';
import { startServer } from '../../server/main';
import { createLogger } from '../../server/lib/log';
import { startTestServer, type TestServer } from '../helpers/server';
import { Browser, editJwtPayload, startIdp, type TestIdp } from '../helpers/oidc-idp';

const CLIENT = { id: 'filedock', secret: 'filedock-client-secret' };

describe('OIDC sign-in', () => {
  let s: TestServer;
  let idp: TestIdp;
  let admin: string;

  before(async () => {
    s = await startTestServer();
    admin = await s.login();
    idp = await startIdp();
    await idp.addClient(CLIENT.id, CLIENT.secret, [`${s.url}/api/auth/oidc/callback`]);
    idp.accounts.set('alice', { email: 'alice@example.test', email_verified: true, preferred_username: 'alice', groups: ['staff', 'fd-admins'] });
    idp.accounts.set('bob', { email: 'bob@example.test', email_verified: true, preferred_username: 'bob', groups: ['staff'] });
  });
  after(async () => {
    await s?.close();
    await idp?.close();
  });

  /** Starts at our server, walks the provider as `login`, and answers the callback URL and the browser. */
  async function throughIdp(login: string, next = '/files', browser = new Browser()) {
    const start = await browser.fetch(`${s.url}/api/auth/oidc/start?next=${encodeURIComponent(next)}`);
    assert.equal(start.status, 302, 'start redirects to the provider');
    const authUrl = start.headers.get('location')!;
    const callback = await browser.throughProvider(authUrl, login);
    return { browser, authUrl, callback };
  }
  /** The callback's redirect target. */
  const land = async (browser: Browser, callback: string) => {
    const r = await browser.fetch(callback);
    assert.equal(r.status, 302);
    return r.headers.get('location')!;
  };
  const userByEmail = async (email: string) =>
    (await s.api('GET', `/api/admin/users?q=${encodeURIComponent(email)}`, { token: admin })).body.users.find((u: { email: string }) => u.email === email);
  const failures = async () =>
    (await s.api('GET', '/api/admin/audit?action=auth.failed&limit=200', { token: admin })).body.events.map(
      (e: { meta: { reason?: string } }) => e.meta?.reason,
    );

  test('unconfigured: capabilities list only local, start lands on the sign-in page with a reason', async () => {
    assert.deepEqual((await s.api('GET', '/api/capabilities')).body.auth, { drivers: ['local'], allow_signup: false });
    const r = await s.api('GET', '/api/auth/oidc/start');
    assert.equal(r.status, 302);
    assert.equal(r.headers.get('location'), '/login?error=oidc_unavailable');
  });

  test('settings: PUT runs discovery first (a dead issuer is refused, nothing saved), the secret reads ***', async () => {
    const dead = await s.api('PUT', '/api/admin/auth/oidc', {
      token: admin,
      body: { issuer: 'http://127.0.0.1:9/', client_id: CLIENT.id, client_secret: CLIENT.secret },
    });
    assert.equal(dead.status, 400);
    assert.equal(dead.body.error, 'validation_failed');
    assert.equal(dead.body.details.field, 'issuer');
    assert.match(dead.body.details.reason, /discovery failed/);
    assert.equal((await s.api('GET', '/api/admin/auth/oidc', { token: admin })).body.issuer, '', 'nothing saved');

    const lan = await s.api('PUT', '/api/admin/auth/oidc', { token: admin, body: { issuer: 'http://192.0.2.1/', client_id: 'x' } });
    assert.equal(lan.status, 400, 'plain http only for a provider on this machine');
    assert.equal(lan.body.details.field, 'issuer');

    const test = await s.api('POST', '/api/admin/auth/oidc/test', { token: admin, body: { issuer: idp.issuer, client_id: CLIENT.id } });
    assert.equal(test.status, 200);
    assert.equal(test.body.issuer, idp.issuer);
    assert.match(test.body.authorization_endpoint, /\/auth$/);

    const put = await s.api('PUT', '/api/admin/auth/oidc', {
      token: admin,
      body: {
        issuer: idp.issuer,
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        scopes: 'openid email profile groups',
        admin_group: 'fd-admins',
        label: 'Test IdP',
      },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.client_secret, '***');
    assert.equal(put.body.active, true);
    assert.equal(put.body.effective_redirect_url, `${s.url}/api/auth/oidc/callback`);
    assert.deepEqual(put.body.env_managed, []);
    const stored = s.server.db.sqlite!.prepare("SELECT value FROM settings WHERE key = 'oidc'").get() as { value: string };
    assert.doesNotMatch(stored.value, new RegExp(CLIENT.secret), 'the secret is stored encrypted');
    assert.match(JSON.parse(stored.value).client_secret, /^enc:v1:/);
    // `***` keeps the stored secret.
    const again = await s.api('PUT', '/api/admin/auth/oidc', { token: admin, body: { client_secret: '***', label: 'Test IdP' } });
    assert.equal(again.status, 200);
    assert.equal(
      JSON.parse((s.server.db.sqlite!.prepare("SELECT value FROM settings WHERE key = 'oidc'").get() as { value: string }).value).client_secret,
      JSON.parse(stored.value).client_secret,
    );

    assert.deepEqual((await s.api('GET', '/api/capabilities')).body.auth, { drivers: ['local', 'oidc'], allow_signup: false, oidc_label: 'Test IdP' });
    const bob = await s.api('GET', '/api/admin/auth/oidc', {});
    assert.equal(bob.status, 401, 'admin only');
  });

  test('start: PKCE S256, state and nonce, our callback; the state is held in an HttpOnly cookie', async () => {
    const browser = new Browser();
    const r = await browser.fetch(`${s.url}/api/auth/oidc/start?next=/files/home`);
    assert.equal(r.status, 302);
    const u = new URL(r.headers.get('location')!);
    assert.equal(u.origin, idp.issuer);
    assert.equal(u.searchParams.get('response_type'), 'code');
    assert.equal(u.searchParams.get('client_id'), CLIENT.id);
    assert.equal(u.searchParams.get('code_challenge_method'), 'S256');
    assert.match(u.searchParams.get('code_challenge')!, /^[\w-]{43}$/);
    assert.ok(u.searchParams.get('state')!.length >= 32);
    assert.ok(u.searchParams.get('nonce')!.length >= 32);
    assert.equal(u.searchParams.get('redirect_uri'), `${s.url}/api/auth/oidc/callback`);
    assert.equal(u.searchParams.get('scope'), 'openid email profile groups');
    const setCookie = r.headers.getSetCookie().find((c) => c.startsWith('service_oidc_state='))!;
    assert.match(setCookie, /httponly/i);
    assert.match(setCookie, /samesite=lax/i);
    assert.match(setCookie, /path=\/api\/auth\/oidc\/callback/i);
    assert.equal(browser.cookie(s.url, 'service_oidc_state'), u.searchParams.get('state'));
    const row = s.server.db.sqlite!.prepare('SELECT * FROM oidc_pending').all() as Array<Record<string, string>>;
    assert.ok(
      row.every((x) => x.state_hash !== u.searchParams.get('state')),
      'the table holds no usable state',
    );
  });

  test('code flow creates the account: groups from the provider, admin group → admin, signed in with a cookie', async () => {
    const { browser, callback } = await throughIdp('alice', '/files/home?view=grid');
    assert.ok(new URL(callback).searchParams.get('code'));
    assert.equal(await land(browser, callback), '/files/home?view=grid');
    const session = browser.cookie(s.url, 'service_session');
    assert.ok(session, 'the session cookie is set');
    assert.equal(browser.cookie(s.url, 'service_oidc_state'), undefined, 'the state cookie is cleared');
    const me = await s.api('GET', '/api/auth/me', { headers: { cookie: `service_session=${session}` } });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.email, 'alice@example.test');
    assert.equal(me.body.user.username, 'alice');
    assert.equal(me.body.user.role, 'admin');
    assert.deepEqual(me.body.user.groups, ['fd-admins', 'staff']);
    const u = await userByEmail('alice@example.test');
    assert.equal(u.auth_driver, 'oidc');
    const link = s.server.db.sqlite!.prepare('SELECT user_id FROM oidc_links WHERE issuer = ? AND sub = ?').get(idp.issuer, 'alice') as { user_id: number };
    assert.equal(link.user_id, u.id);
    const logins = (await s.api('GET', '/api/admin/audit?action=auth.login&limit=50', { token: admin })).body.events;
    assert.ok(
      logins.some((e: { meta: { kind: string }; actor_email?: string }) => e.meta?.kind === 'oidc'),
      'audited as an oidc login',
    );
    // No password login for an account the provider created, even once an admin gave it a password.
    const pw = await s.api('POST', '/api/auth/login', { body: { email: 'alice@example.test', password: 'anything-at-all' } });
    assert.equal(pw.status, 401);
    assert.equal((await s.api('PATCH', `/api/admin/users/${u.id}`, { token: admin, body: { password: 'a-real-password' } })).status, 200);
    assert.equal((await s.api('POST', '/api/auth/login', { body: { email: 'alice@example.test', password: 'a-real-password' } })).status, 401);
  });

  test('a second sign-in updates groups; leaving the admin group demotes; a new e-mail follows (matched by sub)', async () => {
    idp.accounts.set('alice', { email: 'alice.new@example.test', email_verified: true, preferred_username: 'alice', groups: ['staff', 'design'] });
    const { browser, callback } = await throughIdp('alice');
    assert.equal(await land(browser, callback), '/files');
    const u = await userByEmail('alice.new@example.test');
    assert.ok(u, 'the e-mail followed the provider');
    assert.equal(u.role, 'user');
    assert.deepEqual(u.groups, ['design', 'staff']);
    assert.equal((await s.api('GET', '/api/admin/users?q=alice', { token: admin })).body.users.length, 1, 'no second account');
    const groups = s.server.db.sqlite!.prepare('SELECT name FROM groups ORDER BY name').all() as Array<{ name: string }>;
    assert.ok(
      groups.some((g) => g.name === 'design'),
      'missing groups are created',
    );
  });

  test('an existing local account is linked by e-mail only when the provider says it is verified', async () => {
    const local = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: 'carol@example.test', username: 'carol', password: 'carol-password', role: 'user', groups: ['local-only'] },
    });
    assert.equal(local.status, 200);
    idp.accounts.set('carol', { email: 'carol@example.test', email_verified: false, preferred_username: 'carol', groups: ['staff'] });
    let t = await throughIdp('carol');
    assert.equal(await land(t.browser, t.callback), '/login?error=oidc_unverified');
    assert.equal(t.browser.cookie(s.url, 'service_session'), undefined);
    assert.equal((s.server.db.sqlite!.prepare("SELECT count(*) AS n FROM oidc_links WHERE sub = 'carol'").get() as { n: number }).n, 0);

    idp.accounts.set('carol', { email: 'carol@example.test', email_verified: true, preferred_username: 'carol', groups: ['staff', 'fd-admins'] });
    t = await throughIdp('carol');
    assert.equal(await land(t.browser, t.callback), '/files');
    const u = await userByEmail('carol@example.test');
    assert.equal(u.id, local.body.user.id, 'the same account');
    assert.equal(u.auth_driver, 'local', 'keeps its password');
    assert.deepEqual(u.groups, ['fd-admins', 'local-only', 'staff'], 'a local account only gains groups');
    assert.equal(u.role, 'admin', 'promoted by the admin group');
    assert.equal((await s.api('POST', '/api/auth/login', { body: { email: 'carol', password: 'carol-password' } })).status, 200);
    // Leaving the admin group does not demote a local account.
    idp.accounts.set('carol', { email: 'carol@example.test', email_verified: true, groups: ['staff'] });
    t = await throughIdp('carol');
    await land(t.browser, t.callback);
    assert.equal((await userByEmail('carol@example.test')).role, 'admin');
  });

  test('an account an admin creates without a password stays local: a password set later signs in', async () => {
    const created = await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'ivy@example.test', role: 'user' } });
    assert.equal(created.body.user.auth_driver, 'local');
    assert.equal((await s.api('PATCH', `/api/admin/users/${created.body.user.id}`, { token: admin, body: { password: 'ivy-password-1' } })).status, 200);
    assert.equal((await s.api('POST', '/api/auth/login', { body: { email: 'ivy@example.test', password: 'ivy-password-1' } })).status, 200);
  });

  test('a disabled account is refused and gets no session', async () => {
    const { browser, callback } = await throughIdp('bob');
    assert.equal(await land(browser, callback), '/files');
    const bob = await userByEmail('bob@example.test');
    assert.equal(bob.role, 'user');
    assert.equal((await s.api('POST', `/api/admin/users/${bob.id}/disable`, { token: admin })).status, 200);
    const t = await throughIdp('bob');
    assert.equal(await land(t.browser, t.callback), '/login?error=account_disabled');
    assert.equal(t.browser.cookie(s.url, 'service_session'), undefined);
    assert.ok((await failures()).includes('account_disabled'));
  });

  test('a wrong state is refused and creates nothing; the right browser can still finish', async () => {
    idp.accounts.set('dave', { email: 'dave@example.test', email_verified: true, groups: [] });
    const { browser, callback } = await throughIdp('dave');
    const wrong = new URL(callback);
    wrong.searchParams.set('state', 'x'.repeat(43));
    assert.equal(await land(browser, wrong.href), '/login?error=oidc_state');
    assert.equal(await userByEmail('dave@example.test'), undefined, 'nothing created');

    // The callback delivered to another browser (login CSRF): that browser holds no such state.
    const { callback: c2 } = await throughIdp('dave');
    const other = new Browser();
    await other.fetch(`${s.url}/api/auth/oidc/start`); // its own, different state
    assert.equal(await land(other, c2), '/login?error=oidc_state');
    assert.equal(await land(new Browser(), c2), '/login?error=oidc_state');
    assert.equal(await userByEmail('dave@example.test'), undefined);
    assert.ok((await failures()).includes('oidc_state'));
  });

  test('a state is used once; a code replayed with its state is refused by the provider', async () => {
    idp.accounts.set('erin', { email: 'erin@example.test', email_verified: true, groups: [] });
    const { browser, callback } = await throughIdp('erin');
    const state = new URL(callback).searchParams.get('state')!;
    const held = browser.cookie(s.url, 'service_oidc_state')!;
    const pending = s.server.db.sqlite!.prepare('SELECT * FROM oidc_pending').all() as Array<Record<string, string>>;
    assert.equal(await land(browser, callback), '/files');
    // Replayed as is: the state is gone.
    const replay = new Browser();
    await replay.fetch(`${s.url}/api/auth/oidc/start`);
    assert.equal(await land(replay, callback), '/login?error=oidc_state');
    // Even with the state put back (an attacker holding the cookie and the row), the used code is refused.
    const ins = s.server.db.sqlite!.prepare(
      'INSERT INTO oidc_pending (state_hash, issuer, code_verifier, nonce, next, redirect_uri, created_at) VALUES (@state_hash, @issuer, @code_verifier, @nonce, @next, @redirect_uri, @created_at) ON CONFLICT DO NOTHING',
    );
    for (const p of pending) ins.run(p);
    assert.equal(state, held);
    const r = await fetch(callback, { headers: { cookie: `service_oidc_state=${held}` }, redirect: 'manual' });
    assert.equal(r.headers.get('location'), '/login?error=oidc_code');
    assert.ok(!r.headers.getSetCookie().some((c) => c.startsWith('service_session=')), 'no session');
  });

  test('a pending sign-in older than 10 minutes is refused', async () => {
    const { browser, callback } = await throughIdp('erin');
    s.server.db.sqlite!.prepare('UPDATE oidc_pending SET created_at = ?').run(new Date(Date.now() - 11 * 60_000).toISOString());
    assert.equal(await land(browser, callback), '/login?error=oidc_state');
  });

  test('an expired code is refused', async () => {
    idp.codeTtl = 1;
    try {
      const { browser, callback } = await throughIdp('erin');
      await new Promise((r) => setTimeout(r, 2100));
      assert.equal(await land(browser, callback), '/login?error=oidc_code');
      assert.equal(browser.cookie(s.url, 'service_session'), undefined);
    } finally {
      idp.codeTtl = 60;
    }
  });

  test('a tampered ID token is refused: payload changed, or signed with a foreign key', async () => {
    idp.accounts.set('frank', { email: 'frank@example.test', email_verified: true, groups: ['staff'] });
    // The provider's claims win over userinfo's: a forged admin group would make frank an admin.
    idp.tamper = (jwt) => editJwtPayload(jwt, (c) => (c.groups = ['staff', 'fd-admins']));
    try {
      let t = await throughIdp('frank');
      assert.equal(await land(t.browser, t.callback), '/login?error=oidc_token');
      assert.equal(t.browser.cookie(s.url, 'service_session'), undefined);

      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      idp.tamper = (jwt) => {
        const [h, p] = jwt.split('.');
        const header = JSON.parse(Buffer.from(h, 'base64url').toString());
        const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
        // Same header (kid and alg of the provider's key), same claims, another key.
        return new SignJWT(claims).setProtectedHeader(header).sign(privateKey);
      };
      t = await throughIdp('frank');
      assert.equal(await land(t.browser, t.callback), '/login?error=oidc_token');
    } finally {
      idp.tamper = null;
    }
    assert.equal(await userByEmail('frank@example.test'), undefined, 'nothing created');
    // The same person without tampering signs in fine.
    const t = await throughIdp('frank');
    assert.equal(await land(t.browser, t.callback), '/files');
  });

  test('the provider refusing (the person cancels) lands on the sign-in page', async () => {
    const browser = new Browser();
    const start = await browser.fetch(`${s.url}/api/auth/oidc/start`);
    const callback = await browser.throughProvider(start.headers.get('location')!, 'erin', { abort: true });
    assert.equal(new URL(callback).searchParams.get('error'), 'access_denied');
    assert.equal(await land(browser, callback), '/login?error=oidc_denied');
  });

  test('next is a local path only: //evil, https://evil, /\\evil, /..//evil and tab tricks land on /', async () => {
    for (const next of [
      '//evil.example',
      'https://evil.example/x',
      '/\\evil.example',
      '/\t/evil.example',
      '/..//evil.example',
      'javascript:alert(1)',
      '\\\\evil.example',
    ]) {
      const { browser, callback } = await throughIdp('erin', next);
      assert.equal(await land(browser, callback), '/', JSON.stringify(next));
    }
  });
});

describe('OIDC settings from SERVICE_OIDC_*', () => {
  let idp: TestIdp;
  let s: TestServer;
  before(async () => {
    idp = await startIdp();
    idp.accounts.set('gina', { email: 'gina@example.test', email_verified: true, preferred_username: 'gina', groups: ['ops'] });
    s = await startTestServer({
      SERVICE_OIDC_ISSUER: idp.issuer,
      SERVICE_OIDC_CLIENT_ID: CLIENT.id,
      SERVICE_OIDC_CLIENT_SECRET: CLIENT.secret,
      SERVICE_OIDC_SCOPES: 'openid email profile groups',
      SERVICE_OIDC_ADMIN_GROUP: 'ops',
      SERVICE_OIDC_LABEL: 'Company login',
    });
    await idp.addClient(CLIENT.id, CLIENT.secret, [`${s.url}/api/auth/oidc/callback`]);
  });
  after(async () => {
    await s?.close();
    await idp?.close();
  });

  test('applied at start: capabilities offer the button, the console shows them read-only, the secret encrypted', async () => {
    assert.deepEqual((await s.api('GET', '/api/capabilities')).body.auth, { drivers: ['local', 'oidc'], allow_signup: false, oidc_label: 'Company login' });
    const admin = await s.login();
    const v = (await s.api('GET', '/api/admin/auth/oidc', { token: admin })).body;
    assert.deepEqual(v.env_managed, ['issuer', 'client_id', 'client_secret', 'scopes', 'admin_group', 'label']);
    assert.equal(v.client_secret, '***');
    assert.equal(v.issuer, idp.issuer);
    const stored = (s.server.db.sqlite!.prepare("SELECT value FROM settings WHERE key = 'oidc'").get() as { value: string }).value;
    assert.doesNotMatch(stored, new RegExp(CLIENT.secret));

    const change = await s.api('PUT', '/api/admin/auth/oidc', { token: admin, body: { issuer: 'https://other.example/' } });
    assert.equal(change.status, 400);
    assert.equal(change.body.details.field, 'issuer');
    assert.equal(change.body.details.reason, 'set_by_environment');
    const secret = await s.api('PUT', '/api/admin/auth/oidc', { token: admin, body: { client_secret: 'another' } });
    assert.equal(secret.body.details?.field, 'client_secret', 'the secret too');
    // Unchanged managed values and free fields are accepted.
    const ok = await s.api('PUT', '/api/admin/auth/oidc', {
      token: admin,
      body: { issuer: idp.issuer, client_secret: '***', username_claim: 'preferred_username' },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('a sign-in with the environment settings maps the admin group', async () => {
    const browser = new Browser();
    const start = await browser.fetch(`${s.url}/api/auth/oidc/start`);
    const callback = await browser.throughProvider(start.headers.get('location')!, 'gina');
    const r = await browser.fetch(callback);
    assert.equal(r.headers.get('location'), '/');
    const me = await s.api('GET', '/api/auth/me', { headers: { cookie: `service_session=${browser.cookie(s.url, 'service_session')}` } });
    assert.equal(me.body.user.role, 'admin');
    assert.deepEqual(me.body.user.groups, ['ops']);
  });

  test('re-applied at every start; a bad value stops the start with the variable named', async () => {
    const admin = await s.login();
    await s.api('PUT', '/api/admin/auth/oidc', { token: admin, body: { enabled: false } });
    assert.deepEqual((await s.api('GET', '/api/capabilities')).body.auth.drivers, ['local'], 'an admin may switch it off');
    await s.server.close();
    const again = await startTestServer({
      SERVICE_DATA_DIR: s.dataDir,
      SERVICE_OIDC_ISSUER: idp.issuer,
      SERVICE_OIDC_CLIENT_ID: CLIENT.id,
      SERVICE_OIDC_LABEL: 'Renamed',
    });
    try {
      const v = (await again.api('GET', '/api/admin/auth/oidc', { token: await again.login() })).body;
      assert.equal(v.label, 'Renamed', 'the environment wins at start');
      assert.equal(v.admin_group, 'ops', 'values no longer set in the environment stay as stored');
      assert.equal(v.client_secret, '***');
      assert.equal(v.enabled, false, 'the switch stays the admin’s');
    } finally {
      await again.close();
    }
    const bad = loadConfig({
      SERVICE_DATA_DIR: s.dataDir,
      SERVICE_PORT: '0',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_UPDATE_CHECK: '0',
      SERVICE_OIDC_ISSUER: 'http://192.0.2.1/',
    });
    await assert.rejects(startServer(bad, { logger: createLogger('error') }), /SERVICE_OIDC_ISSUER: must be https/);
  });
});

describe('OIDC and the last admin', () => {
  let idp: TestIdp;
  let s: TestServer;
  before(async () => {
    idp = await startIdp();
    s = await startTestServer();
    await idp.addClient(CLIENT.id, CLIENT.secret, [`${s.url}/api/auth/oidc/callback`]);
  });
  after(async () => {
    await s?.close();
    await idp?.close();
  });

  test('leaving the admin group does not demote the last enabled admin; the sign-in goes on', async () => {
    const admin = await s.login();
    const put = await s.api('PUT', '/api/admin/auth/oidc', {
      token: admin,
      body: { issuer: idp.issuer, client_id: CLIENT.id, client_secret: CLIENT.secret, scopes: 'openid email profile groups', admin_group: 'boss' },
    });
    assert.equal(put.status, 200);
    idp.accounts.set('hana', { email: 'hana@example.test', email_verified: true, groups: ['boss'] });
    const signIn = async () => {
      const b = new Browser();
      const start = await b.fetch(`${s.url}/api/auth/oidc/start`);
      const r = await b.fetch(await b.throughProvider(start.headers.get('location')!, 'hana'));
      return { where: r.headers.get('location'), session: b.cookie(s.url, 'service_session') };
    };
    assert.equal((await signIn()).where, '/');
    const users = (await s.api('GET', '/api/admin/users', { token: admin })).body.users as Array<{ id: number; email: string; role: string }>;
    const hana = users.find((u) => u.email === 'hana@example.test')!;
    assert.equal(hana.role, 'admin');
    // The local admin steps down: hana is the last enabled admin.
    const local = users.find((u) => u.email !== 'hana@example.test')!;
    assert.equal((await s.api('POST', `/api/admin/users/${local.id}/disable`, { token: admin })).status, 200);
    idp.accounts.set('hana', { email: 'hana@example.test', email_verified: true, groups: ['staff'] });
    const again = await signIn();
    assert.equal(again.where, '/');
    const me = await s.api('GET', '/api/auth/me', { headers: { cookie: `service_session=${again.session}` } });
    assert.equal(me.body.user.role, 'admin', 'kept: the last admin');
    assert.deepEqual(me.body.user.groups, ['staff'], 'groups still synced');
  });
});
