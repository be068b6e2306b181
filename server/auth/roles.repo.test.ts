import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RolesRepo } from './roles.repo';
import { UsersRepo } from './users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT } from '../db';

let t: TestDb;
let repo: RolesRepo;
before(async () => {
  t = await openTestDb();
  repo = new RolesRepo(t.db);
});
after(() => t?.close());

const at = () => new Date().toISOString();

test('roles: a taken name (any case) is refused on create and rename; members are counted as numbers', async () => {
  const id = await repo.create('Editors', { 'files.write': true }, at());
  assert.equal(typeof id, 'number');
  assert.equal(await repo.create('editors', {}, at()), undefined);
  const other = (await repo.create('Guests', {}, at()))!;
  assert.equal(await repo.update(other, { name: 'EDITORS' }, at()), false);
  assert.equal(await repo.update(other, { name: 'Visitors', permissions: { 'shares.write': false } }, at()), true);
  const users = new UsersRepo(t.db);
  for (const n of ['a', 'b'])
    await users.update(DEFAULT_TENANT, await users.insert(DEFAULT_TENANT, { email: `${n}@example.com`, username: n, role: 'user', password_hash: null }), {
      custom_role_id: id!,
    });
  const rows = await repo.list();
  assert.deepEqual(
    rows.map((r) => [r.name, r.members, r.permissions]),
    [
      ['Editors', 2, { 'files.write': true }],
      ['Visitors', 0, { 'shares.write': false }],
    ],
  );
  await repo.delete(other);
  assert.deepEqual(
    (await repo.list()).map((r) => r.name),
    ['Editors'],
  );
});

test('exceptions are replaced whole; twenty replacements racing leave exactly one whole set', async () => {
  const u = await new UsersRepo(t.db).insert({ email: 'x@example.com', username: 'x', role: 'user', password_hash: null });
  await repo.setExceptions(u, { 'files.write': false, 'shares.write': true });
  assert.deepEqual(await repo.exceptions(u), { 'files.write': false, 'shares.write': true });
  const a: Record<string, boolean> = { 'files.write': true };
  const b: Record<string, boolean> = { 'shares.write': false, 'files.delete': true };
  const sets = Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b));
  await Promise.all(sets.map((s) => repo.setExceptions(u, s)));
  const got = await repo.exceptions(u);
  assert.ok(
    sets.some((s) => JSON.stringify(Object.entries(s).sort()) === JSON.stringify(Object.entries(got).sort())),
    JSON.stringify(got),
  );
});
