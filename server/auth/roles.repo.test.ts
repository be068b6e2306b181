import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RolesRepo } from './roles.repo';
import { UsersRepo } from './users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: RolesRepo;
let users: UsersRepo;
before(async () => {
  t = await openTestDb();
  repo = new RolesRepo(t.db);
  users = new UsersRepo(t.db);
});
after(() => t?.close());

const at = () => new Date().toISOString();
const person = (s: TenantScope, n: string) => users.insert(s, { email: `${n}@example.com`, username: n, role: 'user', password_hash: null });

test('roles: a taken name (any case) is refused on create and rename; members are counted as numbers', async () => {
  const id = await repo.create(T1, 'Editors', { 'files.write': true }, at());
  assert.equal(typeof id, 'number');
  assert.equal(await repo.create(T1, 'editors', {}, at()), undefined);
  const other = (await repo.create(T1, 'Guests', {}, at()))!;
  assert.equal(await repo.update(T1, other, { name: 'EDITORS' }, at()), false);
  assert.equal(await repo.update(T1, other, { name: 'Visitors', permissions: { 'shares.write': false } }, at()), true);
  for (const n of ['a', 'b']) await users.update(T1, await person(T1, n), { custom_role_id: id! });
  const rows = await repo.list(T1);
  assert.deepEqual(
    rows.map((r) => [r.name, r.members, r.permissions]),
    [
      ['Editors', 2, { 'files.write': true }],
      ['Visitors', 0, { 'shares.write': false }],
    ],
  );
  await repo.delete(T1, other);
  assert.deepEqual(
    (await repo.list(T1)).map((r) => r.name),
    ['Editors'],
  );
});

test('exceptions are replaced whole; twenty replacements racing leave exactly one whole set', async () => {
  const u = await person(T1, 'x');
  await repo.setExceptions(T1, u, { 'files.write': false, 'shares.write': true });
  assert.deepEqual(await repo.exceptions(T1, u), { 'files.write': false, 'shares.write': true });
  const a: Record<string, boolean> = { 'files.write': true };
  const b: Record<string, boolean> = { 'shares.write': false, 'files.delete': true };
  const sets = Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b));
  await Promise.all(sets.map((s) => repo.setExceptions(T1, u, s)));
  const got = await repo.exceptions(T1, u);
  assert.ok(
    sets.some((s) => JSON.stringify(Object.entries(s).sort()) === JSON.stringify(Object.entries(got).sort())),
    JSON.stringify(got),
  );
});

test('two tenants: the same role name in each; a scope sees, renames, deletes and counts only its own', async () => {
  const one = (await repo.create(T1, 'Auditors', { 'files.write': false }, at()))!;
  const two = await repo.create(T2, 'AUDITORS', { 'files.write': true }, at());
  assert.equal(typeof two, 'number', 'the name is unique per tenant, not across the installation');
  assert.equal(await repo.create(T2, 'auditors', {}, at()), undefined, 'and still unique (without case) inside one');
  await users.update(T2, await person(T2, 'x'), { custom_role_id: two! });

  const named = async (s: TenantScope) => (await repo.list(s)).filter((r) => /auditors/i.test(r.name)).map((r) => [r.id, r.members]);
  assert.deepEqual(await named(T1), [[one, 0]]);
  assert.deepEqual(await named(T2), [[two, 1]], "tenant 2's member counts in tenant 2 only");
  assert.equal(await new UsersRepo(t.db).roleExists(T1, two!), false, "another tenant's role cannot be given");

  await repo.update(T1, two!, { name: 'Taken over' }, at());
  await repo.delete(T1, two!);
  assert.deepEqual(
    (await repo.list(T2)).map((r) => r.name),
    ['AUDITORS'],
    "tenant 1 can neither rename nor delete tenant 2's role",
  );
  assert.equal(await repo.update(T2, two!, { name: 'Auditors 2' }, at()), true);
  assert.deepEqual(await named(T1), [[one, 0]]);
});

test("two tenants: a person's exceptions are read and replaced in their tenant only", async () => {
  const u2 = await person(T2, 'exceptional');
  await repo.setExceptions(T2, u2, { 'shares.write': false });
  assert.deepEqual(await repo.exceptions(T1, u2), {}, "tenant 1 does not read tenant 2's exceptions");
  await repo.setExceptions(T1, u2, { 'files.write': true });
  assert.deepEqual(await repo.exceptions(T2, u2), { 'shares.write': false }, 'nor does its replacement remove them');
  const p = (await users.principal(T2, u2))!;
  assert.deepEqual([p.tenant_id, p.exceptions], [2, { 'shares.write': false }], 'the principal reads its own tenant’s');
  assert.equal(await users.principal(T1, u2), null);
});

test("a principal's custom role is its tenant's (a role id of another tenant gives nothing)", async () => {
  const r2 = (await repo.create(T2, 'Uploaders', { 'files.write': true }, at()))!;
  const u2 = await person(T2, 'uploader');
  await users.update(T2, u2, { custom_role_id: r2 });
  assert.deepEqual((await users.principal(T2, u2))!.customRole, { 'files.write': true });
  assert.deepEqual((await users.principals(T2)).find((p) => p.id === u2)?.customRole, { 'files.write': true });
  assert.equal(
    (await users.principals(T1)).find((p) => p.id === u2),
    undefined,
  );
});
