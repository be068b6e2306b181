import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { UsersRepo } from './users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: UsersRepo;
before(async () => {
  t = await openTestDb();
  repo = new UsersRepo(t.db);
});
after(() => t?.close());

test('by login (e-mail or username, any case), the count as a number, the principal of a live account', async () => {
  const before = await repo.count();
  assert.equal(typeof before, 'number');
  const id = await repo.insert({ email: 'Ann@example.com', username: 'ann', role: 'user', password_hash: 'h0' });
  assert.equal(await repo.count(), before + 1);
  assert.equal((await repo.byLogin(' ann@EXAMPLE.com '))?.id, id);
  assert.equal((await repo.byLogin('ann'))?.id, id);
  assert.equal(await repo.byLogin('nobody@example.com'), undefined);
  assert.deepEqual(await repo.principal(id, 's1').then((p) => [p?.email, p?.sessionId, p?.groups]), ['Ann@example.com', 's1', []]);
  await repo.update(id, { disabled: 1 });
  assert.equal(await repo.principal(id), null, 'a disabled account is no principal');
});

test('rehashes racing from one hash: exactly one replaces it, a password changed meanwhile wins', async () => {
  const id = await repo.insert({ email: 'bo@example.com', username: 'bo', role: 'user', password_hash: 'weak' });
  const got = await Promise.all(Array.from({ length: 5 }, (_, i) => repo.rehash(id, 'weak', `strong${i}`)));
  assert.equal(got.filter(Boolean).length, 1, JSON.stringify(got));
  await repo.update(id, { password_hash: 'changed' });
  assert.equal(await repo.rehash(id, 'weak', 'late'), false);
  assert.equal((await repo.byLogin('bo'))?.password_hash, 'changed');
});

test('taken names ignore case and the account itself; groups list their members; a missing role is no role', async () => {
  const id = await repo.insert({ email: 'cy@example.com', username: 'cy', role: 'user', password_hash: null });
  assert.equal(await repo.exists('email', 'CY@example.com'), true);
  assert.equal(await repo.exists('email', 'cy@example.com', id), false, 'its own address is not taken');
  assert.equal(await repo.exists('username', 'nobody'), false);
  await repo.setGroups(id, ['team', 'all']);
  const groups = await repo.groupsWithMembers();
  assert.deepEqual(
    groups.filter((g) => g.name === 'team' || g.name === 'all').map((g) => [g.name, g.members.map((m) => m.id)]),
    [
      ['all', [id]],
      ['team', [id]],
    ],
  );
  assert.equal(await repo.roleExists(999_999), false);
});

test('an account with its groups in one unit; views and the search read their groups; a change answers the row before', async () => {
  const id = await repo.insert({ email: 'dee@example.com', username: 'dee', role: 'user', password_hash: null }, ['ops', ' ops ', 'all']);
  assert.deepEqual((await repo.view(id))?.groups, ['all', 'ops']);
  assert.equal(await repo.view(999_999), undefined);
  const before = await repo.update(id, { language: 'tr', quota_bytes: 5_000_000_000 }, ['ops']);
  assert.equal(typeof before === 'object' && before.language, null);
  const v = (await repo.listViews({ q: 'dee' }))[0];
  assert.deepEqual([v.id, v.language, v.groups, v.quota_bytes, v.disabled], [id, 'tr', ['ops'], 5_000_000_000, false]);
  assert.deepEqual(
    (await repo.list({ q: 'de_' })).map((u) => u.id),
    [],
    'a `_` in the search is a character, not a wildcard',
  );
  assert.equal(await repo.update(999_999, { language: 'en' }), 'not_found');
  assert.equal(await repo.delete(999_999), 'not_found');
  assert.ok(((await repo.principals()).find((p) => p.id === id)?.groups ?? []).includes('ops'));
});

/** Two enabled admins and nobody else enabled as admin: the test's own pair. */
async function lastTwoAdmins(tag: string): Promise<[number, number]> {
  const a = await repo.insert({ email: `${tag}a@example.com`, username: `${tag}a`, role: 'admin', password_hash: null });
  const b = await repo.insert({ email: `${tag}b@example.com`, username: `${tag}b`, role: 'admin', password_hash: null });
  // Earlier tests' admins are disabled: the pair must be the last two enabled admins.
  for (const u of await repo.list({ role: 'admin', limit: 10_000 })) if (u.id !== a && u.id !== b) await repo.update(u.id, { disabled: 1 });
  return [a, b];
}

const enabledAdmins = async () => (await repo.list({ role: 'admin', limit: 10_000 })).filter((u) => !u.disabled).length;

test('the last enabled admin stays: alone it can be neither demoted, disabled nor deleted', async () => {
  const [a, b] = await lastTwoAdmins('solo');
  assert.equal(typeof (await repo.update(b, { role: 'user' })), 'object');
  assert.equal(await repo.update(a, { role: 'viewer' }), 'last_admin');
  assert.equal(await repo.update(a, { disabled: 1 }), 'last_admin');
  assert.equal(await repo.delete(a), 'last_admin');
  assert.equal((await repo.byId(a))?.role, 'admin', 'nothing was written');
  assert.equal(typeof (await repo.update(a, { language: 'de' })), 'object', 'other changes pass');
});

for (const [name, change] of [
  ['demote', (id: number) => repo.update(id, { role: 'user' })],
  ['disable', (id: number) => repo.update(id, { disabled: 1 })],
  ['delete', (id: number) => repo.delete(id)],
] as const)
  test(`the last two admins racing to ${name} each other: exactly one succeeds, one enabled admin is left`, async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b] = await lastTwoAdmins(`${name}${round}`);
      const got = await Promise.all([change(a), change(b)]);
      assert.equal(got.filter((r) => r === 'last_admin').length, 1, JSON.stringify(got));
      assert.equal(await enabledAdmins(), 1);
    }
  });
