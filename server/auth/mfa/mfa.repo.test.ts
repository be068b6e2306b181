/**
 * The two-factor repository on SQLite and (TEST_DATABASE=postgres) PostgreSQL: its single-use and
 * read-decide-write families raced by callers at once (a TOTP step, a recovery code, a challenge, a pending
 * secret, a set of codes, a first passkey's codes, a factor removed while a passkey is added).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MfaRepo, type PasskeyRow } from './mfa.repo';
import { UsersRepo } from '../users.repo';
import { openTestDb, type TestDb } from '../../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: MfaRepo;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new MfaRepo(t.db);
});
after(() => t?.close());

const AT = '2026-12-06T10:00:00.000Z';
/** A login's second-step challenge of `user_id`, made at AT, open five minutes. */
const loginChallenge = (id: string, user_id: number) => ({
  id,
  user_id,
  purpose: 'login' as const,
  login: 'm',
  webauthn_challenge: null,
  rp_id: null,
  created_at: AT,
  expires_at: '2026-12-06T10:05:00.000Z',
});
const account = async (s: TenantScope = T1): Promise<number> =>
  new UsersRepo(t.db).insert(s, { email: `m${++user}@example.com`, username: `m${user}`, role: 'user', password_hash: null });
const hashes = (set: string) => Array.from({ length: 10 }, (_, i) => `${set}-${i}`);
const passkey = (user_id: number, credential_id: string): Omit<PasskeyRow, 'id' | 'last_used_at' | 'tenant_id'> => ({
  user_id,
  credential_id,
  public_key: 'pk',
  counter: 0,
  transports: '[]',
  rp_id: 'localhost',
  name: credential_id,
  created_at: AT,
});
const times = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));
const trues = (xs: boolean[]) => xs.filter(Boolean).length;

/** A person with an active TOTP (last accepted step 100) and one set of codes. */
async function enrolledTotp(): Promise<number> {
  const u = await account();
  await repo.setPending(T1, u, 'sealed-a', AT);
  assert.equal(await repo.activate(T1, u, 'sealed-a', 100, AT), true);
  await repo.replaceCodes(T1, u, hashes('first'), AT);
  return u;
}

test('a pending secret is activated only as it was checked, and once', async () => {
  const u = await account();
  await repo.setPending(T1, u, 'sealed-a', AT);
  await repo.setPending(T1, u, 'sealed-b', AT);
  assert.equal(await repo.activate(T1, u, 'sealed-a', 5, AT), false, 'a setup restarted after the code was checked');
  assert.equal(trues(await times(5, () => repo.activate(T1, u, 'sealed-b', 5, AT))), 1);
  const row = (await repo.totp(T1, u))!;
  assert.deepEqual([row.secret, row.pending_secret, row.last_step], ['sealed-b', null, 5]);
  assert.equal(await repo.enrolled(T1, u), true);
});

test('ten callers with one TOTP step: one is accepted, and no earlier step after it', async () => {
  const u = await enrolledTotp();
  assert.equal(trues(await times(10, () => repo.acceptStep(T1, u, 101))), 1);
  assert.equal(await repo.acceptStep(T1, u, 100), false);
  assert.equal((await repo.totp(T1, u))?.last_step, 101);
});

test('ten callers with one recovery code: one spends it', async () => {
  const u = await enrolledTotp();
  const [code] = await repo.unusedCodes(T1, u);
  assert.equal(trues(await times(10, () => repo.useCode(T1, code.id, AT))), 1);
  assert.equal((await repo.unusedCodes(T1, u)).length, 9);
});

test('two replacements of the codes racing leave one whole set', async () => {
  const fresh = await account();
  const u = await enrolledTotp();
  for (const who of [fresh, u]) {
    await Promise.all([repo.replaceCodes(T1, who, hashes('x'), AT), repo.replaceCodes(T1, who, hashes('y'), AT)]);
    const left = (await repo.unusedCodes(T1, who)).map((c) => c.code_hash);
    assert.equal(left.length, 10, JSON.stringify(left));
    assert.ok(left.every((h) => h.startsWith('x-')) || left.every((h) => h.startsWith('y-')), JSON.stringify(left));
  }
});

test('a challenge is consumed by one caller; a new one sweeps the expired', async () => {
  const u = await account();
  const c = loginChallenge('c1', u);
  await repo.insertChallenge(T1, c, AT);
  assert.equal((await repo.challenge(T1, 'c1', AT))?.user_id, u);
  assert.equal(await repo.challenge(T1, 'c1', '2026-12-06T10:05:00.000Z'), undefined, 'expired');
  assert.equal(trues(await times(10, () => repo.consumeChallenge(T1, 'c1'))), 1);
  await repo.insertChallenge(T1, { ...c, id: 'c2' }, AT);
  await repo.insertChallenge(T1, { ...c, id: 'c3', expires_at: '2026-12-06T11:00:00.000Z' }, '2026-12-06T10:30:00.000Z');
  assert.equal(await repo.challenge(T1, 'c2', AT), undefined, 'swept by the later insert');
  assert.ok(await repo.challenge(T1, 'c3', AT));
  assert.equal(await repo.removeChallenges(T1, u, 'login'), 1);
});

test('two first passkeys racing store one set of codes; a credential is stored once', async () => {
  const u = await account();
  const got = await Promise.all([repo.addPasskey(T1, passkey(u, 'cred-a'), hashes('a'), AT), repo.addPasskey(T1, passkey(u, 'cred-b'), hashes('b'), AT)]);
  assert.deepEqual(got.map((g) => !!g?.passkey).sort(), [true, true]);
  assert.equal(got.filter((g) => g?.codes).length, 1, 'one of them made the first codes');
  assert.equal((await repo.unusedCodes(T1, u)).length, 10);
  assert.equal(await repo.addPasskey(T1, passkey(u, 'cred-a'), hashes('c'), AT), undefined);
  assert.deepEqual((await repo.passkeys(T1, u)).map((p) => p.credential_id).sort(), ['cred-a', 'cred-b']);
  assert.deepEqual((await repo.passkeys(T1, u, 'elsewhere')).length, 0);
  assert.equal((await repo.passkeyByCredential(T1, 'cred-b'))?.user_id, u);
  assert.deepEqual(await repo.enrolledUsers(T1).then((all) => all.find((e) => e.user_id === u)?.methods), ['passkey']);
});

test('removing the TOTP while a passkey is added keeps the codes; removing the last factor drops them', async () => {
  for (let round = 0; round < 3; round++) {
    const u = await enrolledTotp();
    await Promise.all([repo.removeTotp(T1, u).then(() => repo.removeCodesIfBare(T1, u)), repo.addPasskey(T1, passkey(u, `cred-r${round}`), hashes('p'), AT)]);
    assert.equal(await repo.enrolled(T1, u), true);
    assert.equal((await repo.unusedCodes(T1, u)).length, 10, `round ${round}: a passkey without codes`);
    const [pk] = await repo.passkeys(T1, u);
    assert.deepEqual(await repo.removePasskey(T1, u + 1, pk.id), undefined, "another person's passkey");
    const removed = await times(3, () => repo.removePasskey(T1, u, pk.id));
    assert.equal(removed.filter(Boolean).length, 1);
    await repo.removeCodesIfBare(T1, u);
    assert.equal((await repo.unusedCodes(T1, u)).length, 0);
  }
});

test('a TOTP removed twice at once is removed for one caller; a reset removes everything once', async () => {
  const u = await enrolledTotp();
  assert.equal(trues(await times(5, () => repo.removeTotp(T1, u))), 1);
  const v = await enrolledTotp();
  await repo.addPasskey(T1, passkey(v, `cred-reset-${v}`), hashes('z'), AT);
  await repo.touchPasskey(T1, (await repo.passkeys(T1, v))[0].id, 7, AT);
  assert.equal((await repo.passkeys(T1, v))[0].counter, 7);
  assert.deepEqual(await repo.reset(T1, v), { totp: true, passkeys: 1, recovery_codes: 10 });
  assert.deepEqual(await repo.reset(T1, v), { totp: false, passkeys: 0, recovery_codes: 0 });
  assert.equal(await repo.enrolled(T1, v), false);
});

test('two tenants: each scope reads, uses, removes and resets only its own factors, codes and challenges', async () => {
  const u = await enrolledTotp();
  const v = await account(T2);
  await repo.setPending(T2, v, 'sealed-2', AT);
  assert.equal(await repo.activate(T2, v, 'sealed-2', 100, AT), true);
  await repo.replaceCodes(T2, v, hashes('two'), AT);
  await repo.addPasskey(T2, passkey(v, `cred-t2-${v}`), [], AT);

  // Tenant 1 looks for tenant 2's person: nothing, and its writes change nothing.
  assert.equal(await repo.totp(T1, v), undefined);
  assert.equal(await repo.enrolled(T1, v), false);
  assert.deepEqual(await repo.unusedCodes(T1, v), []);
  assert.deepEqual(await repo.passkeys(T1, v), []);
  assert.equal(await repo.passkeyByCredential(T1, `cred-t2-${v}`), undefined);
  assert.equal(await repo.acceptStep(T1, v, 200), false);
  const [code] = await repo.unusedCodes(T2, v);
  assert.equal(await repo.useCode(T1, code.id, AT), false);
  const [pk] = await repo.passkeys(T2, v);
  await repo.touchPasskey(T1, pk.id, 9, AT);
  assert.equal(await repo.removePasskey(T1, v, pk.id), undefined);
  assert.equal(await repo.removeTotp(T1, v), false);
  assert.deepEqual(await repo.reset(T1, v), { totp: false, passkeys: 0, recovery_codes: 0 });
  assert.equal(
    (await repo.enrolledUsers(T1)).find((e) => e.user_id === v),
    undefined,
  );

  assert.deepEqual(
    [(await repo.totp(T2, v))?.last_step, (await repo.passkeys(T2, v))[0].counter, (await repo.unusedCodes(T2, v)).map((c) => c.code_hash)],
    [100, 0, hashes('two')],
    "tenant 2's factors are as they were",
  );
  assert.deepEqual((await repo.enrolledUsers(T2)).find((e) => e.user_id === v)?.methods, ['totp', 'passkey']);
  assert.equal(
    (await repo.enrolledUsers(T2)).find((e) => e.user_id === u),
    undefined,
    "tenant 1's person is not listed in tenant 2",
  );

  const c = loginChallenge(`t2-${v}`, v);
  await repo.insertChallenge(T2, c, AT);
  await repo.insertChallenge(T1, { ...c, id: `t1-${v}`, user_id: u }, '2026-12-06T11:00:00.000Z');
  assert.ok(await repo.challenge(T2, c.id, AT), "tenant 1's sweep leaves tenant 2's challenges");
  assert.equal(await repo.challenge(T1, c.id, AT), undefined);
  assert.equal(await repo.consumeChallenge(T1, c.id), false);
  assert.equal(await repo.removeChallenges(T1, v, 'login'), 0);
  assert.equal(await repo.consumeChallenge(T2, c.id), true);
  assert.deepEqual(await repo.reset(T2, v), { totp: true, passkeys: 1, recovery_codes: 10 });
});
