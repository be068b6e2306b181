import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { UsersRepo } from './users.repo';
import { DEFAULT_TENANT } from '../db';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

const T1 = DEFAULT_TENANT;

let t: TestDb;
let repo: UsersRepo;
before(async () => {
  t = await openTestDb();
  repo = new UsersRepo(t.db);
});
after(() => t?.close());

test('by login (e-mail or username, any case), the count as a number, the principal of a live account', async () => {
  const before = await repo.count(T1);
  assert.equal(typeof before, 'number');
  const id = await repo.insert(T1, { email: 'Ann@example.com', username: 'ann', role: 'user', password_hash: 'h0' });
  assert.equal(await repo.count(T1), before + 1);
  assert.equal((await repo.byLogin(T1, ' ann@EXAMPLE.com '))?.id, id);
  assert.equal((await repo.byLogin(T1, 'ann'))?.id, id);
  assert.equal(await repo.byLogin(T1, 'nobody@example.com'), undefined);
  assert.deepEqual(await repo.principal(T1, id, 's1').then((p) => [p?.email, p?.sessionId, p?.groups]), ['Ann@example.com', 's1', []]);
  await repo.update(T1, id, { disabled: 1 });
  assert.equal(await repo.principal(T1, id), null, 'a disabled account is no principal');
});

test('rehashes racing from one hash: exactly one replaces it, a password changed meanwhile wins', async () => {
  const id = await repo.insert(T1, { email: 'bo@example.com', username: 'bo', role: 'user', password_hash: 'weak' });
  const got = await Promise.all(Array.from({ length: 5 }, (_, i) => repo.rehash(T1, id, 'weak', `strong${i}`)));
  assert.equal(got.filter(Boolean).length, 1, JSON.stringify(got));
  await repo.update(T1, id, { password_hash: 'changed' });
  assert.equal(await repo.rehash(T1, id, 'weak', 'late'), false);
  assert.equal((await repo.byLogin(T1, 'bo'))?.password_hash, 'changed');
});

test('taken names ignore case and the account itself; groups list their members; a missing role is no role', async () => {
  const id = await repo.insert(T1, { email: 'cy@example.com', username: 'cy', role: 'user', password_hash: null });
  assert.equal(await repo.exists(T1, 'email', 'CY@example.com'), true);
  assert.equal(await repo.exists(T1, 'email', 'cy@example.com', id), false, 'its own address is not taken');
  assert.equal(await repo.exists(T1, 'username', 'nobody'), false);
  await repo.setGroups(T1, id, ['team', 'all']);
  const groups = await repo.groupsWithMembers(T1);
  assert.deepEqual(
    groups.filter((g) => g.name === 'team' || g.name === 'all').map((g) => [g.name, g.members.map((m) => m.id)]),
    [
      ['all', [id]],
      ['team', [id]],
    ],
  );
  assert.equal(await repo.roleExists(T1, 999_999), false);
});

test('an account with its groups in one unit; views and the search read their groups; a change answers the row before', async () => {
  const id = await repo.insert(T1, { email: 'dee@example.com', username: 'dee', role: 'user', password_hash: null }, ['ops', ' ops ', 'all']);
  assert.deepEqual((await repo.view(T1, id))?.groups, ['all', 'ops']);
  assert.equal(await repo.view(T1, 999_999), undefined);
  const before = await repo.update(T1, id, { language: 'tr', quota_bytes: 5_000_000_000 }, ['ops']);
  assert.equal(typeof before === 'object' && before.language, null);
  const v = (await repo.listViews(T1, { q: 'dee' }))[0];
  assert.deepEqual([v.id, v.language, v.groups, v.quota_bytes, v.disabled], [id, 'tr', ['ops'], 5_000_000_000, false]);
  assert.deepEqual(
    (await repo.list(T1, { q: 'de_' })).map((u) => u.id),
    [],
    'a `_` in the search is a character, not a wildcard',
  );
  assert.equal(await repo.update(T1, 999_999, { language: 'en' }), 'not_found');
  assert.equal(await repo.delete(T1, 999_999), 'not_found');
  assert.ok(((await repo.principals(T1)).find((p) => p.id === id)?.groups ?? []).includes('ops'));
});

/** Two enabled admins and nobody else enabled as admin: the test's own pair. */
async function lastTwoAdmins(tag: string): Promise<[number, number]> {
  const a = await repo.insert(T1, { email: `${tag}a@example.com`, username: `${tag}a`, role: 'admin', password_hash: null });
  const b = await repo.insert(T1, { email: `${tag}b@example.com`, username: `${tag}b`, role: 'admin', password_hash: null });
  // Earlier tests' admins are disabled: the pair must be the last two enabled admins.
  for (const u of await repo.list(T1, { role: 'admin', limit: 10_000 })) if (u.id !== a && u.id !== b) await repo.update(T1, u.id, { disabled: 1 });
  return [a, b];
}

const enabledAdmins = async () => (await repo.list(T1, { role: 'admin', limit: 10_000 })).filter((u) => !u.disabled).length;

test('the last enabled admin stays: alone it can be neither demoted, disabled nor deleted', async () => {
  const [a, b] = await lastTwoAdmins('solo');
  assert.equal(typeof (await repo.update(T1, b, { role: 'user' })), 'object');
  assert.equal(await repo.update(T1, a, { role: 'viewer' }), 'last_admin');
  assert.equal(await repo.update(T1, a, { disabled: 1 }), 'last_admin');
  assert.equal(await repo.delete(T1, a), 'last_admin');
  assert.equal((await repo.byId(T1, a))?.role, 'admin', 'nothing was written');
  assert.equal(typeof (await repo.update(T1, a, { language: 'de' })), 'object', 'other changes pass');
});

for (const [name, change] of [
  ['demote', (id: number) => repo.update(T1, id, { role: 'user' })],
  ['disable', (id: number) => repo.update(T1, id, { disabled: 1 })],
  ['delete', (id: number) => repo.delete(T1, id)],
] as const)
  test(`the last two admins racing to ${name} each other: exactly one succeeds, one enabled admin is left`, async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b] = await lastTwoAdmins(`${name}${round}`);
      const got = await Promise.all([change(a), change(b)]);
      assert.equal(got.filter((r) => r === 'last_admin').length, 1, JSON.stringify(got));
      assert.equal(await enabledAdmins(), 1);
    }
  });

test('two tenants with the same names: each scope finds only its own account, by id, login or name, and its own groups', async () => {
  const T2 = { tenant_id: 2 };
  const one = await repo.insert(T1, { email: 'twin@example.com', username: 'twin', role: 'admin', password_hash: null }, ['crew']);
  const two = await repo.insert(T2, { email: 'twin@example.com', username: 'twin', role: 'admin', password_hash: null }, ['crew']);
  assert.notEqual(one, two);
  assert.equal((await repo.byLogin(T1, 'twin'))?.id, one);
  assert.equal((await repo.byLogin(T2, 'TWIN@example.com'))?.id, two);
  assert.equal(await repo.byId(T1, two), undefined, 'another tenant’s id answers like a missing one');
  assert.equal(await repo.byId(T2, one), undefined);
  assert.equal(await repo.principal(T1, two), null);
  assert.equal((await repo.principal(T2, two))?.tenant_id, 2, 'a principal carries its tenant');
  assert.deepEqual(
    (await repo.list(T2, { q: 'twin' })).map((u) => u.id),
    [two],
  );
  assert.equal(await repo.count(T2), 1);
  assert.equal(await repo.exists(T2, 'username', 'twin', two), false, 'the other tenant’s twin does not take the name');
  assert.equal(await repo.update(T1, two, { language: 'tr' }), 'not_found', 'nor can it be changed');
  assert.equal(await repo.delete(T2, one), 'not_found');
  assert.equal(await repo.delete(T2, two), 'last_admin', 'the last admin rule counts the tenant’s own admins');
  const crew = async (s: { tenant_id: number }) => (await repo.groupsWithMembers(s)).find((g) => g.name === 'crew')?.members.map((m) => m.id);
  assert.deepEqual(await crew(T2), [two], 'a group name is per tenant');
  assert.ok(!(await crew(T1))?.includes(two));
  assert.deepEqual(
    (await repo.principals(T2)).map((p) => [p.id, p.groups]),
    [[two, ['crew']]],
  );
});
