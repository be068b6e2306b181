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
  const id = repo.insert({ email: 'Ann@example.com', username: 'ann', role: 'user', password_hash: 'h0' });
  assert.equal(await repo.count(), before + 1);
  assert.equal((await repo.byLogin(' ann@EXAMPLE.com '))?.id, id);
  assert.equal((await repo.byLogin('ann'))?.id, id);
  assert.equal(await repo.byLogin('nobody@example.com'), undefined);
  assert.deepEqual(await repo.principalAsync(id, 's1').then((p) => [p?.email, p?.sessionId, p?.groups]), ['Ann@example.com', 's1', []]);
  repo.update(id, { disabled: 1 });
  assert.equal(await repo.principalAsync(id), null, 'a disabled account is no principal');
});

test('rehashes racing from one hash: exactly one replaces it, a password changed meanwhile wins', async () => {
  const id = repo.insert({ email: 'bo@example.com', username: 'bo', role: 'user', password_hash: 'weak' });
  const got = await Promise.all(Array.from({ length: 5 }, (_, i) => repo.rehash(id, 'weak', `strong${i}`)));
  assert.equal(got.filter(Boolean).length, 1, JSON.stringify(got));
  repo.update(id, { password_hash: 'changed' });
  assert.equal(await repo.rehash(id, 'weak', 'late'), false);
  assert.equal((await repo.byLogin('bo'))?.password_hash, 'changed');
});

test('taken names ignore case and the account itself; groups list their members; a missing role is no role', async () => {
  const id = repo.insert({ email: 'cy@example.com', username: 'cy', role: 'user', password_hash: null });
  assert.equal(await repo.exists('email', 'CY@example.com'), true);
  assert.equal(await repo.exists('email', 'cy@example.com', id), false, 'its own address is not taken');
  assert.equal(await repo.exists('username', 'nobody'), false);
  repo.setGroups(id, ['team', 'all']);
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
