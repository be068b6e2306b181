/**
 * Two-factor sign-in over HTTP on a real server: TOTP enrolment and the
 * login's second step (codes computed with otpauth from the secret shown),
 * recovery codes, passkeys through a software authenticator, the throttle
 * counting second-step failures, the admin reset, enumeration, bad input.
 * Each test that fails on purpose speaks from its own address
 * (X-Forwarded-For over loopback), so the per-address counter of one test
 * never locks another.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { startTestServer, ADMIN, type TestServer } from '../helpers/server';
import { SoftAuthenticator } from '../helpers/soft-authenticator';
import { kdfLoad } from '../../server/auth/passwords';

const totpAt = (secret: string, ms: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: ms });
const MIA = { email: 'mia@example.test', username: 'mia', password: 'mia-password-1' };
const NED = { email: 'ned@example.test', username: 'ned', password: 'ned-password-1' };
const from = (ip: string) => ({ 'x-forwarded-for': ip });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('two-factor sign-in', () => {
  let s: TestServer;
  let admin: string;
  let mia: string;
  let miaId: number;
  let secret: string;
  let codes: string[];
  let soft: SoftAuthenticator;

  const login = (who: { email: string; password: string }, headers: Record<string, string> = {}) =>
    s.api('POST', '/api/auth/login', { body: { email: who.email, password: who.password }, headers });
  const second = (challenge: string, answer: Record<string, unknown>, headers: Record<string, string> = {}) =>
    s.api('POST', '/api/auth/login/mfa', { body: { challenge, ...answer }, headers });

  before(async () => {
    // The lock (and the failure window) outlasts several password hashes (scrypt N=2^17: up to ~1.5 s on a busy machine).
    s = await startTestServer({ SERVICE_LOGIN_MAX_ATTEMPTS: '3', SERVICE_LOGIN_LOCK: '5s' });
    admin = await s.login();
    for (const u of [MIA, NED]) await s.api('POST', '/api/admin/users', { token: admin, body: { ...u, role: 'user' } });
    mia = await s.login(MIA.email, MIA.password);
    miaId = (await s.api('GET', '/api/auth/me', { token: mia })).body.user.id;
    soft = new SoftAuthenticator(s.url);
  });
  after(() => s.close());

  test('TOTP enrolment: the password is re-entered, setup stays pending until a right code confirms it', async () => {
    const none = await s.api('POST', '/api/auth/mfa/totp/setup', { token: mia, body: {}, headers: from('10.1.0.1') });
    assert.equal(none.status, 400);
    assert.equal(none.body.details.field, 'current_password');
    const wrong = await s.api('POST', '/api/auth/mfa/totp/setup', { token: mia, body: { current_password: 'not-it-at-all' }, headers: from('10.1.0.1') });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.details.field, 'current_password');
    const setup = await s.api('POST', '/api/auth/mfa/totp/setup', { token: mia, body: { current_password: MIA.password } });
    assert.equal(setup.status, 200);
    secret = setup.body.secret;
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.equal(new URL(setup.body.uri).searchParams.get('secret'), secret);
    assert.match(setup.body.qr, /^data:image\/png;base64,iVBOR/);
    const pending = await s.api('GET', '/api/auth/mfa', { token: mia });
    assert.deepEqual([pending.body.enabled, pending.body.totp.pending], [false, true]);
    // Not active yet: the password alone still signs in.
    assert.ok((await login(MIA)).body.token);

    const bad = await s.api('POST', '/api/auth/mfa/totp/confirm', { token: mia, body: { code: '000000' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.field, 'code');
    const ok = await s.api('POST', '/api/auth/mfa/totp/confirm', { token: mia, body: { code: totpAt(secret, Date.now()) } });
    assert.equal(ok.status, 200);
    codes = ok.body.recovery_codes;
    assert.equal(codes.length, 10);
    const st = await s.api('GET', '/api/auth/mfa', { token: mia });
    assert.deepEqual([st.body.enabled, st.body.totp.enabled, st.body.recovery_codes.remaining], [true, true, 10]);
    const audit = await s.api('GET', `/api/admin/audit?action=auth.mfa_enrolled&user_id=${miaId}`, { token: admin });
    assert.equal(audit.body.events[0].meta.method, 'totp');
  });

  test('login answers a challenge and no cookie; the second step answers the plain login shape with the cookie', async () => {
    const r = await login(MIA);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['challenge', 'expires_at', 'methods', 'mfa_required']);
    assert.equal(r.body.mfa_required, true);
    assert.deepEqual(r.body.methods, ['totp', 'recovery']);
    const left = Date.parse(r.body.expires_at) - Date.now();
    assert.ok(left > 4.5 * 60_000 && left <= 5 * 60_000, `expires in five minutes (${left} ms)`);
    assert.equal(r.headers.get('set-cookie'), null);
    // The confirming code's step is spent; the next step's code (inside the window) is good once.
    const code = totpAt(secret, Date.now() + 30_000);
    const done = await second(r.body.challenge, { totp: code });
    assert.equal(done.status, 200);
    assert.deepEqual(Object.keys(done.body).sort(), ['expires_at', 'token', 'user']);
    assert.equal(done.body.user.email, MIA.email);
    assert.match(done.headers.get('set-cookie')!, /^service_session=.+httponly/i);
    const cookie = done.headers.get('set-cookie')!.split(';')[0];
    assert.equal((await s.api('GET', '/api/auth/me', { headers: { cookie } })).status, 200);
    // Single use: the finished challenge is gone.
    assert.equal((await second(r.body.challenge, { totp: code }, from('10.2.0.1'))).body.error, 'mfa_expired');
    // Replay of the same code in the same step through a fresh challenge.
    const again = await login(MIA);
    const replay = await second(again.body.challenge, { totp: code }, from('10.2.0.1'));
    assert.equal(replay.status, 401);
    assert.equal(replay.body.error, 'mfa_invalid');
    const logins = await s.api('GET', `/api/admin/audit?action=auth.login&user_id=${miaId}`, { token: admin });
    assert.equal(logins.body.events[0].meta.mfa, 'totp');
  });

  test('a recovery code signs in once; reuse is refused; a new set replaces the old one', async () => {
    const use = async (code: string, ip: string) => second((await login(MIA)).body.challenge, { recovery_code: code }, from(ip));
    assert.equal((await use(codes[0].toUpperCase().replace('-', ' '), '10.3.0.1')).status, 200);
    const reuse = await use(codes[0], '10.3.0.2');
    assert.equal(reuse.status, 401);
    assert.equal(reuse.body.error, 'mfa_invalid');
    assert.equal((await s.api('GET', '/api/auth/mfa', { token: mia })).body.recovery_codes.remaining, 9);
    const fresh = await s.api('POST', '/api/auth/mfa/recovery-codes', { token: mia, body: { current_password: MIA.password } });
    assert.equal(fresh.body.recovery_codes.length, 10);
    assert.equal((await use(codes[1], '10.3.0.3')).status, 401, 'a code of the replaced set');
    codes = fresh.body.recovery_codes;
    assert.equal((await use(codes[0], '10.3.0.4')).status, 200);
    mia = (await use(codes[1], '10.3.0.5')).body.token;
  });

  test('second-step failures count in the login throttle and lock like wrong passwords; a right password does not reset them', async () => {
    const ip = from('10.4.0.1');
    const c1 = (await login(MIA, ip)).body.challenge;
    const w1 = await second(c1, { totp: '000000' }, ip);
    assert.equal(w1.status, 401);
    assert.equal(w1.body.params.tries_left, 2);
    assert.match(w1.body.message, /2 tries left/);
    // Signing in with the right password again must not forgive the wrong code.
    const c2 = (await login(MIA, ip)).body.challenge;
    assert.equal((await second(c2, { recovery_code: 'zzzzz-zzzzz' }, ip)).body.params.tries_left, 1);
    const w3 = await second(c2, { totp: '111111' }, ip);
    assert.equal(w3.status, 429);
    assert.equal(w3.body.error, 'rate_limited');
    assert.ok(Number(w3.headers.get('retry-after')) >= 1);
    // Locked for the person: the password step refuses before the KDF, under either name, from any address.
    for (const name of [MIA.email, MIA.username]) {
      kdfLoad(true); // counted, not timed: at high load a refusal took longer than any fixed bound
      const r = await login({ email: name, password: MIA.password }, from('10.4.0.2'));
      assert.equal(r.status, 429, name);
      assert.equal(kdfLoad().peak, 0, 'refused before the password hash runs');
    }
    assert.equal((await second(c2, { totp: totpAt(secret, Date.now()) }, from('10.4.0.3'))).status, 429, 'the second step too');
    const failed = await s.api('GET', `/api/admin/audit?action=auth.mfa_failed&user_id=${miaId}`, { token: admin });
    assert.ok(failed.body.events.length >= 3);
    assert.equal(failed.body.events[0].ip, '10.4.0.1');
    await new Promise((r) => setTimeout(r, 5100));
    const after = await login(MIA, from('10.4.0.4'));
    assert.equal(after.body.mfa_required, true);
    assert.equal((await second(after.body.challenge, { recovery_code: codes[2] }, from('10.4.0.4'))).status, 200);
  });

  test('no enumeration: an unknown account and a wrong password of a two-factor account answer alike, in the same time', async () => {
    let n = 0;
    const attempt = async (email: string) => {
      const t0 = performance.now();
      const r = await login({ email, password: 'wrong-password-x' }, from(`10.5.${++n}.1`));
      return { r, ms: performance.now() - t0 };
    };
    const unknown: number[] = [];
    const twoFactor: number[] = [];
    for (let i = 0; i < 6; i++) {
      const a = await attempt(`nobody${i}@example.test`);
      // Alternating her two names keeps each under the lock: a locked answer would come fast and spoil the timing.
      const b = await attempt(i % 2 ? MIA.username : MIA.email);
      assert.equal(b.r.status, 401);
      if (i === 0) {
        assert.equal(a.r.status, 401);
        assert.equal(b.r.status, 401);
        assert.deepEqual(Object.keys(a.r.body).sort(), Object.keys(b.r.body).sort());
        assert.equal(a.r.body.error, 'invalid_credentials');
        assert.equal(b.r.body.error, 'invalid_credentials');
        assert.equal(a.r.body.params.tries_left, b.r.body.params.tries_left);
        assert.equal(a.r.body.message, b.r.body.message);
      }
      unknown.push(a.ms);
      twoFactor.push(b.ms);
      // Each name fails every other round: its third failure falls outside the 5 s window, so it never locks.
      await new Promise((r) => setTimeout(r, 1500));
    }
    const ratio = median(unknown) / median(twoFactor);
    assert.ok(
      ratio > 0.5 && ratio < 2,
      `median ${median(unknown).toFixed(1)} ms (unknown) vs ${median(twoFactor).toFixed(1)} ms (two-factor): the KDF runs for both`,
    );
    assert.ok(median(unknown) > 20, 'the unknown account pays for a password hash too');
    // Her names still hold wrong passwords from this test (second-step failures count on the name typed too):
    // let the 5 s window pass so the next test starts clean however fast the machine is.
    await new Promise((r) => setTimeout(r, 5100));
  });

  test('passkeys: added with a name after the password, used at the second step, counter kept; forgeries refused', async () => {
    const noPw = await s.api('POST', '/api/auth/mfa/passkeys/options', { token: mia, body: {} });
    assert.equal(noPw.body.details.field, 'current_password');
    const opt = await s.api('POST', '/api/auth/mfa/passkeys/options', { token: mia, body: { current_password: MIA.password } });
    assert.equal(opt.status, 200);
    assert.equal(opt.body.options.rp.id, '127.0.0.1');
    const response = soft.create(opt.body.options);
    const reg = await s.api('POST', '/api/auth/mfa/passkeys', { token: mia, body: { challenge: opt.body.challenge, name: 'Laptop', response } });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    assert.equal(reg.body.passkey.name, 'Laptop');
    assert.equal(reg.body.passkey.rp_id, '127.0.0.1');
    assert.equal(reg.body.recovery_codes, undefined, 'the enrolment already has codes');
    const twice = await s.api('POST', '/api/auth/mfa/passkeys', { token: mia, body: { challenge: opt.body.challenge, name: 'Again', response } });
    assert.equal(twice.body.details.field, 'challenge', 'the registration challenge is single use');
    // Made for another origin: refused.
    const opt2 = await s.api('POST', '/api/auth/mfa/passkeys/options', { token: mia, body: { current_password: MIA.password } });
    assert.deepEqual(
      opt2.body.options.excludeCredentials.map((c: { id: string }) => c.id),
      [response.id],
    );
    const evil = await s.api('POST', '/api/auth/mfa/passkeys', {
      token: mia,
      body: { challenge: opt2.body.challenge, name: 'Evil', response: soft.create(opt2.body.options, { origin: 'http://evil.test' }) },
    });
    assert.equal(evil.status, 400);
    assert.equal(evil.body.details.field, 'response');
    soft.credentials.pop();

    const ip = from('10.6.0.1');
    const r = await login(MIA, ip);
    assert.deepEqual(r.body.methods, ['totp', 'recovery', 'passkey']);
    const opts = r.body.passkey_options;
    assert.equal(opts.rpId, '127.0.0.1');
    assert.deepEqual(
      opts.allowCredentials.map((c: { id: string }) => c.id),
      [response.id],
    );
    assert.equal(
      (await second(r.body.challenge, { passkey: soft.get(opts, { origin: 'http://evil.test' }) }, ip)).body.error,
      'mfa_invalid',
      'a foreign origin',
    );
    const other = await login(MIA, ip);
    assert.equal((await second(other.body.challenge, { passkey: soft.get(opts) }, ip)).body.error, 'mfa_invalid', 'signed for another challenge');
    const ok = await second(r.body.challenge, { passkey: soft.get(opts) }, ip);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.ok(ok.body.token);
    const st = await s.api('GET', '/api/auth/mfa', { token: mia });
    assert.ok(st.body.passkeys[0].last_used_at);
    // A counter that did not move on: a cloned authenticator.
    const next = await login(MIA, from('10.6.0.2'));
    const used = soft.credentials[0].counter;
    assert.equal(
      (await second(next.body.challenge, { passkey: soft.get(next.body.passkey_options, { counter: used }) }, from('10.6.0.2'))).body.error,
      'mfa_invalid',
    );
    assert.equal((await second(next.body.challenge, { passkey: soft.get(next.body.passkey_options, { counter: used + 5 }) }, from('10.6.0.2'))).status, 200);
  });

  test('removing a passkey and TOTP needs the password; the last factor takes the recovery codes along', async () => {
    const pk = (await s.api('GET', '/api/auth/mfa', { token: mia })).body.passkeys[0];
    assert.equal(
      (await s.api('DELETE', `/api/auth/mfa/passkeys/${pk.id}`, { token: mia, body: { current_password: 'nope-nope-nope' }, headers: from('10.7.0.1') }))
        .status,
      400,
    );
    assert.equal((await s.api('DELETE', `/api/auth/mfa/passkeys/${pk.id}`, { token: mia, body: { current_password: MIA.password } })).status, 200);
    assert.equal((await s.api('DELETE', `/api/auth/mfa/passkeys/${pk.id}`, { token: mia, body: { current_password: MIA.password } })).status, 404);
    assert.equal((await s.api('DELETE', '/api/auth/mfa/totp', { token: mia, body: { current_password: MIA.password } })).status, 200);
    const st = (await s.api('GET', '/api/auth/mfa', { token: mia })).body;
    assert.deepEqual([st.enabled, st.passkeys.length, st.recovery_codes.remaining], [false, 0, 0]);
    assert.ok((await login(MIA)).body.token, 'the password alone signs in again');
    const removed = await s.api('GET', `/api/admin/audit?action=auth.mfa_removed&user_id=${miaId}`, { token: admin });
    assert.deepEqual(removed.body.events.map((e: { meta: { method: string } }) => e.meta.method).sort(), ['passkey', 'totp']);
  });

  test('a first passkey without TOTP brings its recovery codes', async () => {
    const ned = await s.login(NED.email, NED.password);
    const opt = await s.api('POST', '/api/auth/mfa/passkeys/options', { token: ned, body: { current_password: NED.password } });
    const reg = await s.api('POST', '/api/auth/mfa/passkeys', {
      token: ned,
      body: { challenge: opt.body.challenge, name: 'Key', response: soft.create(opt.body.options) },
    });
    assert.equal(reg.body.recovery_codes.length, 10);
    const r = await login(NED);
    assert.deepEqual(r.body.methods, ['recovery', 'passkey']);
    assert.equal(
      (await s.api('POST', '/api/auth/mfa/recovery-codes', { token: await s.login(), body: { current_password: ADMIN.password } })).status,
      409,
      'no second factor, no codes',
    );
  });

  test('admin reset removes every factor, is audited and rings the person; non-admins are refused', async () => {
    assert.equal((await login(NED)).body.mfa_required, true);
    const nedId = (await s.api('GET', '/api/admin/users?q=ned', { token: admin })).body.users[0].id;
    const enrolled = await s.api('GET', '/api/admin/mfa', { token: admin });
    assert.deepEqual(enrolled.body.users, [{ user_id: nedId, methods: ['passkey'] }]);
    assert.equal((await s.api('POST', `/api/admin/users/${nedId}/mfa/reset`, { token: mia })).status, 403);
    const reset = await s.api('POST', `/api/admin/users/${nedId}/mfa/reset`, { token: admin });
    assert.equal(reset.status, 200);
    assert.deepEqual(reset.body.removed, { totp: false, passkeys: 1, recovery_codes: 10 });
    assert.equal((await s.api('POST', '/api/admin/users/999999/mfa/reset', { token: admin })).status, 404);
    const audit = await s.api('GET', '/api/admin/audit?action=user.mfa_reset', { token: admin });
    assert.equal(audit.body.events[0].resource, `user:${nedId}`);
    assert.equal(audit.body.events[0].user_email, ADMIN.email);
    const token = await s.login(NED.email, NED.password);
    const bell = await s.api('GET', '/api/notifications', { token });
    assert.equal(bell.body.notifications[0].event, 'user.mfa_reset');
    assert.equal(bell.body.notifications[0].severity, 'warning');
  });

  test('bad input on the second step', async () => {
    const ip = from('10.8.0.1');
    assert.equal((await second('x'.repeat(43), { totp: '123456' }, ip)).body.error, 'mfa_expired');
    const r = await s.api('POST', '/api/auth/login/mfa', { body: { totp: '123456' }, headers: ip });
    assert.deepEqual([r.status, r.body.details.field], [400, 'challenge']);
    const both = await second('x'.repeat(43), { totp: '123456', recovery_code: 'abc' }, ip);
    assert.deepEqual([both.status, both.body.error], [400, 'validation_failed']);
    const neither = await second('x'.repeat(43), {}, ip);
    assert.deepEqual([neither.status, neither.body.details.field], [400, 'totp']);
    const junk = await second('x'.repeat(43), { passkey: { id: 'a' } }, ip);
    assert.equal(junk.status, 400);
    assert.equal((await s.api('DELETE', '/api/auth/mfa/passkeys/abc', { token: mia, body: { current_password: MIA.password } })).body.error, 'bad_id');
    assert.equal((await s.api('GET', '/api/auth/mfa')).status, 401);
  });
});
