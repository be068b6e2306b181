/**
 * TOTP and recovery codes on a real SQLite file with a fake clock: the ±1
 * step window, replays of an accepted step refused, recovery codes single use
 * and replaced by a new set, the second step's throttle and its challenge.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { DEFAULT_TENANT, openDatabase, type Db } from '../../db';
import { EventBus } from '../../events';
import { tempDir } from '../../../test/helpers/tools';
import { LoginThrottle } from '../throttle';
import { UsersRepo } from '../users.repo';
import { matchTotp, totpStep, TOTP_PERIOD_S } from './totp';
import { normalizeRecoveryCode, newRecoveryCodes } from './recovery';
import { createMfa, type Mfa, type Who } from '.';

const T0 = Date.parse('2026-11-26T10:00:10Z');
const codeAt = (secret: string, ms: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: ms, period: TOTP_PERIOD_S });

describe('matchTotp', () => {
  const secret = new Secret({ size: 20 }).base32;
  const step = totpStep(T0);

  test('accepts the current step and one on either side, nothing further', () => {
    for (const d of [-1, 0, 1]) assert.equal(matchTotp(secret, codeAt(secret, T0 + d * 30_000), T0, 0), step + d, `offset ${d}`);
    for (const d of [-3, -2, 2, 3]) assert.equal(matchTotp(secret, codeAt(secret, T0 + d * 30_000), T0, 0), null, `offset ${d}`);
  });

  test('refuses the accepted step and earlier ones (replay), takes a later one', () => {
    const code = codeAt(secret, T0);
    assert.equal(matchTotp(secret, code, T0, step), null, 'same step');
    assert.equal(matchTotp(secret, codeAt(secret, T0 - 30_000), T0, step), null, 'an earlier step');
    assert.equal(matchTotp(secret, codeAt(secret, T0 + 30_000), T0, step), step + 1);
  });

  test('malformed codes are refused; spaces are ignored', () => {
    const code = codeAt(secret, T0);
    assert.equal(matchTotp(secret, `${code.slice(0, 3)} ${code.slice(3)}`, T0, 0), step);
    for (const bad of ['', '12345', '1234567', 'abcdef', `${code}0`]) assert.equal(matchTotp(secret, bad, T0, 0), null, bad);
  });
});

test('recovery codes: ten distinct, xxxxx-xxxxx, typed look-alikes normalised', () => {
  const codes = newRecoveryCodes();
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  for (const c of codes) assert.match(c, /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
  assert.equal(normalizeRecoveryCode(' AB0C1-D2E3F '), 'ab0c1d2e3f');
  assert.equal(normalizeRecoveryCode('abOcI-d2eLf'), 'ab0c1d2e1f');
});

describe('enrolment and second step (real database, fake clock)', () => {
  let db: Db;
  let cleanup: () => void;
  let mfa: Mfa;
  let users: UsersRepo;
  let now = T0;
  let who: Who;
  let secret: string;
  let codes: string[];
  const req = { ip: '10.0.0.9', ua: 'test' };

  before(async () => {
    const t = tempDir('filedock-mfa-');
    cleanup = t.cleanup;
    db = openDatabase(join(t.dir, 'db.sqlite'));
    users = new UsersRepo(db);
    const id = await users.insert({ email: 'ann@example.test', username: 'ann', role: 'user', password_hash: null });
    who = { tenant_id: 1, id, email: 'ann@example.test', username: 'ann', request: req };
    const throttle = new LoginThrottle({ maxAttempts: 3, lockMs: 60_000 });
    mfa = createMfa({ db, users, bus: new EventBus(db), throttle, secretKey: randomBytes(32), clock: () => now });
  });
  after(async () => {
    await db.close();
    cleanup();
  });

  const begin = async () => (await mfa.secondStep.begin((await users.byId(DEFAULT_TENANT, who.id))!, 'ann', null))!;
  const finish = async (answer: { totp?: string; recovery_code?: string }) =>
    mfa.secondStep.finish(DEFAULT_TENANT, (await begin()).challenge, answer, null, req);
  const code = async (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: { code: string }) => e.code,
    );

  test('no second factor: begin answers null', async () => {
    assert.equal(await mfa.secondStep.begin((await users.byId(DEFAULT_TENANT, who.id))!, 'ann', null), null);
  });

  test('setup is pending until a right code confirms it; the secret is stored sealed', async () => {
    const s = await mfa.enrolment.totpSetup(who);
    secret = s.secret;
    assert.match(s.uri, /^otpauth:\/\/totp\/Filedock:ann%40example\.test\?/);
    assert.match(s.qr, /^data:image\/png;base64,/);
    const row = db.sqlite!.prepare('SELECT * FROM mfa_totp').get() as { secret: string | null; pending_secret: string };
    assert.equal(row.secret, null);
    assert.ok(row.pending_secret.startsWith('enc:v1:') && !row.pending_secret.includes(secret));
    assert.equal((await mfa.enrolment.status(who, who.id, '')).totp.pending, true);
    assert.equal(await code(mfa.enrolment.totpConfirm(who, '000000')), 'validation_failed');
    const { recovery_codes } = await mfa.enrolment.totpConfirm(who, codeAt(secret, now));
    assert.equal(recovery_codes.length, 10);
    const st = await mfa.enrolment.status(who, who.id, '');
    assert.deepEqual([st.enabled, st.totp.enabled, st.totp.pending, st.recovery_codes.remaining], [true, true, false, 10]);
    // Only keyed hashes are stored.
    const stored = (db.sqlite!.prepare('SELECT code_hash FROM mfa_recovery_codes').all() as Array<{ code_hash: string }>).map((r) => r.code_hash);
    for (const c of recovery_codes) assert.ok(!stored.some((h) => h.includes(normalizeRecoveryCode(c))));
    codes = recovery_codes;
  });

  test('the confirming code cannot sign in (its step is spent); the next step can, once', async () => {
    const ch = await begin();
    assert.deepEqual(ch.methods, ['totp', 'recovery']);
    assert.equal(Date.parse(ch.expires_at) - now, 5 * 60_000);
    assert.equal(await code(finish({ totp: codeAt(secret, now) })), 'mfa_invalid', 'replay of the confirming step');
    now += 30_000;
    const c = codeAt(secret, now);
    const r = await mfa.secondStep.finish(DEFAULT_TENANT, (await begin()).challenge, { totp: c }, null, req);
    assert.equal(r.user.id, who.id);
    assert.equal(r.method, 'totp');
    assert.equal(await code(finish({ totp: c })), 'mfa_invalid', 'replay within the same step');
    now += 5_000;
    assert.equal(await code(finish({ totp: c })), 'mfa_invalid', 'replay later in the window');
  });

  test('a challenge is single use and lasts five minutes', async () => {
    now += 30_000;
    const ch = await begin();
    await mfa.secondStep.finish(DEFAULT_TENANT, ch.challenge, { totp: codeAt(secret, now) }, null, req);
    now += 30_000;
    assert.equal(await code(mfa.secondStep.finish(DEFAULT_TENANT, ch.challenge, { totp: codeAt(secret, now) }, null, req)), 'mfa_expired');
    const old = await begin();
    now += 5 * 60_000 + 1;
    assert.equal(await code(mfa.secondStep.finish(DEFAULT_TENANT, old.challenge, { totp: codeAt(secret, now) }, null, req)), 'mfa_expired');
    // A new challenge sweeps the expired ones.
    await begin();
    const stale = db.sqlite!.prepare('SELECT count(*) AS n FROM mfa_challenges WHERE expires_at <= ?').get(new Date(now).toISOString()) as { n: number };
    assert.equal(stale.n, 0);
  });

  test('a recovery code works once; a new set replaces the old one', async () => {
    assert.equal((await finish({ recovery_code: codes[0].toUpperCase() })).method, 'recovery');
    assert.equal(await code(finish({ recovery_code: codes[0] })), 'mfa_invalid', 'reuse');
    assert.equal((await mfa.enrolment.status(who, who.id, '')).recovery_codes.remaining, 9);
    const fresh = (await mfa.enrolment.regenerateCodes(who)).recovery_codes;
    assert.equal(await code(finish({ recovery_code: codes[1] })), 'mfa_invalid', 'an old-set code');
    assert.equal((await finish({ recovery_code: fresh[9] })).method, 'recovery');
  });

  test('wrong answers lock the person after the limit, even with a fresh challenge and another spelling', async () => {
    const e1 = await finish({ totp: '000000' }).catch((e) => e);
    assert.equal(e1.code, 'mfa_invalid');
    assert.equal(e1.params.tries_left, 2);
    await finish({ recovery_code: 'zzzzz-zzzzz' }).catch(() => {});
    assert.equal(await code(finish({ totp: '111111' })), 'rate_limited');
    now += 30_000;
    const other = await mfa.secondStep.begin((await users.byId(DEFAULT_TENANT, who.id))!, 'ann@example.test', null);
    assert.equal(
      await code(mfa.secondStep.finish(DEFAULT_TENANT, other!.challenge, { totp: codeAt(secret, now) }, null, req)),
      'rate_limited',
      'locked for the person, whatever the login',
    );
  });

  test('removing the last factor drops the recovery codes', async () => {
    await mfa.enrolment.totpRemove(who);
    const st = await mfa.enrolment.status(who, who.id, '');
    assert.deepEqual([st.enabled, st.totp.enabled, st.recovery_codes.remaining], [false, false, 0]);
    assert.equal(await code(mfa.enrolment.totpRemove(who)), 'not_found');
  });
});
