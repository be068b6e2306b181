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

let t: TestDb;
let repo: MfaRepo;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new MfaRepo(t.db);
});
after(() => t?.close());

const AT = '2026-12-06T10:00:00.000Z';
const account = async (): Promise<number> =>
  new UsersRepo(t.db).insert({ email: `m${++user}@example.com`, username: `m${user}`, role: 'user', password_hash: null });
const hashes = (set: string) => Array.from({ length: 10 }, (_, i) => `${set}-${i}`);
const passkey = (user_id: number, credential_id: string): Omit<PasskeyRow, 'id' | 'last_used_at'> => ({
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
  await repo.setPending(u, 'sealed-a', AT);
  assert.equal(await repo.activate(u, 'sealed-a', 100, AT), true);
  await repo.replaceCodes(u, hashes('first'), AT);
  return u;
}

test('a pending secret is activated only as it was checked, and once', async () => {
  const u = await account();
  await repo.setPending(u, 'sealed-a', AT);
  await repo.setPending(u, 'sealed-b', AT);
  assert.equal(await repo.activate(u, 'sealed-a', 5, AT), false, 'a setup restarted after the code was checked');
  assert.equal(trues(await times(5, () => repo.activate(u, 'sealed-b', 5, AT))), 1);
  const row = (await repo.totp(u))!;
  assert.deepEqual([row.secret, row.pending_secret, row.last_step], ['sealed-b', null, 5]);
  assert.equal(await repo.enrolled(u), true);
});

test('ten callers with one TOTP step: one is accepted, and no earlier step after it', async () => {
  const u = await enrolledTotp();
  assert.equal(trues(await times(10, () => repo.acceptStep(u, 101))), 1);
  assert.equal(await repo.acceptStep(u, 100), false);
  assert.equal((await repo.totp(u))?.last_step, 101);
});

test('ten callers with one recovery code: one spends it', async () => {
  const u = await enrolledTotp();
  const [code] = await repo.unusedCodes(u);
  assert.equal(trues(await times(10, () => repo.useCode(code.id, AT))), 1);
  assert.equal((await repo.unusedCodes(u)).length, 9);
});

test('two replacements of the codes racing leave one whole set', async () => {
  const fresh = await account();
  const u = await enrolledTotp();
  for (const who of [fresh, u]) {
    await Promise.all([repo.replaceCodes(who, hashes('x'), AT), repo.replaceCodes(who, hashes('y'), AT)]);
    const left = (await repo.unusedCodes(who)).map((c) => c.code_hash);
    assert.equal(left.length, 10, JSON.stringify(left));
    assert.ok(left.every((h) => h.startsWith('x-')) || left.every((h) => h.startsWith('y-')), JSON.stringify(left));
  }
});

test('a challenge is consumed by one caller; a new one sweeps the expired', async () => {
  const u = await account();
  const c = {
    id: 'c1',
    user_id: u,
    purpose: 'login' as const,
    login: 'm',
    webauthn_challenge: null,
    rp_id: null,
    created_at: AT,
    expires_at: '2026-12-06T10:05:00.000Z',
  };
  await repo.insertChallenge(c, AT);
  assert.equal((await repo.challenge('c1', AT))?.user_id, u);
  assert.equal(await repo.challenge('c1', '2026-12-06T10:05:00.000Z'), undefined, 'expired');
  assert.equal(trues(await times(10, () => repo.consumeChallenge('c1'))), 1);
  await repo.insertChallenge({ ...c, id: 'c2' }, AT);
  await repo.insertChallenge({ ...c, id: 'c3', expires_at: '2026-12-06T11:00:00.000Z' }, '2026-12-06T10:30:00.000Z');
  assert.equal(await repo.challenge('c2', AT), undefined, 'swept by the later insert');
  assert.ok(await repo.challenge('c3', AT));
  assert.equal(await repo.removeChallenges(u, 'login'), 1);
});

test('two first passkeys racing store one set of codes; a credential is stored once', async () => {
  const u = await account();
  const got = await Promise.all([repo.addPasskey(passkey(u, 'cred-a'), hashes('a'), AT), repo.addPasskey(passkey(u, 'cred-b'), hashes('b'), AT)]);
  assert.deepEqual(got.map((g) => !!g?.passkey).sort(), [true, true]);
  assert.equal(got.filter((g) => g?.codes).length, 1, 'one of them made the first codes');
  assert.equal((await repo.unusedCodes(u)).length, 10);
  assert.equal(await repo.addPasskey(passkey(u, 'cred-a'), hashes('c'), AT), undefined);
  assert.deepEqual((await repo.passkeys(u)).map((p) => p.credential_id).sort(), ['cred-a', 'cred-b']);
  assert.deepEqual((await repo.passkeys(u, 'elsewhere')).length, 0);
  assert.equal((await repo.passkeyByCredential('cred-b'))?.user_id, u);
  assert.deepEqual(await repo.enrolledUsers().then((all) => all.find((e) => e.user_id === u)?.methods), ['passkey']);
});

test('removing the TOTP while a passkey is added keeps the codes; removing the last factor drops them', async () => {
  for (let round = 0; round < 3; round++) {
    const u = await enrolledTotp();
    await Promise.all([repo.removeTotp(u).then(() => repo.removeCodesIfBare(u)), repo.addPasskey(passkey(u, `cred-r${round}`), hashes('p'), AT)]);
    assert.equal(await repo.enrolled(u), true);
    assert.equal((await repo.unusedCodes(u)).length, 10, `round ${round}: a passkey without codes`);
    const [pk] = await repo.passkeys(u);
    assert.deepEqual(await repo.removePasskey(u + 1, pk.id), undefined, "another person's passkey");
    const removed = await times(3, () => repo.removePasskey(u, pk.id));
    assert.equal(removed.filter(Boolean).length, 1);
    await repo.removeCodesIfBare(u);
    assert.equal((await repo.unusedCodes(u)).length, 0);
  }
});

test('a TOTP removed twice at once is removed for one caller; a reset removes everything once', async () => {
  const u = await enrolledTotp();
  assert.equal(trues(await times(5, () => repo.removeTotp(u))), 1);
  const v = await enrolledTotp();
  await repo.addPasskey(passkey(v, `cred-reset-${v}`), hashes('z'), AT);
  await repo.touchPasskey((await repo.passkeys(v))[0].id, 7, AT);
  assert.equal((await repo.passkeys(v))[0].counter, 7);
  assert.deepEqual(await repo.reset(v), { totp: true, passkeys: 1, recovery_codes: 10 });
  assert.deepEqual(await repo.reset(v), { totp: false, passkeys: 0, recovery_codes: 0 });
  assert.equal(await repo.enrolled(v), false);
});
