import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OidcLinksRepo } from './links.repo';
import { UsersRepo } from '../users.repo';
import { openTestDb, type TestDb } from '../../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: OidcLinksRepo;
before(async () => {
  t = await openTestDb();
  repo = new OidcLinksRepo(t.db);
});
after(() => t?.close());

const at = () => new Date().toISOString();

test('a subject links once, finds its account, and the e-mail lookup ignores case', async () => {
  const id = await new UsersRepo(t.db).insert(T1, { email: 'Ann@example.com', username: 'ann', role: 'user', password_hash: null });
  assert.equal((await repo.userByEmail(T1, 'ann@example.com'))?.id, id);
  assert.equal(await repo.hasSubject(T1, 'https://idp', id), false);
  assert.equal(await repo.link(T1, 'https://idp', 'sub-1', id, at()), true);
  assert.equal(await repo.link(T1, 'https://idp', 'sub-1', id, at()), true, 'the same subject again is fine');
  assert.equal(await repo.link(T1, 'https://idp', 'sub-2', id, at()), false, 'another subject of the same issuer is refused');
  assert.equal(await repo.link(T1, 'https://other-idp', 'sub-2', id, at()), true, 'another issuer may link');
  assert.equal((await repo.linkedUser(T1, 'https://idp', 'sub-1'))?.id, id);
  assert.equal(await repo.linkedUser(T1, 'https://idp', 'sub-2'), undefined);
  await repo.touch(T1, 'https://idp', 'sub-1', '2030-01-01T00:00:00.000Z');
  const row = await t.db.async.first(t.db.k.selectFrom('oidc_links').select('last_login_at').where('tenant_id', '=', 1).where('sub', '=', 'sub-1'));
  assert.equal(row?.last_login_at, '2030-01-01T00:00:00.000Z');
});

test('eight subjects racing to link one account: exactly one wins', async () => {
  const id = await new UsersRepo(t.db).insert(T1, { email: 'bo@example.com', username: 'bo', role: 'user', password_hash: null });
  const got = await Promise.all(Array.from({ length: 8 }, (_, i) => repo.link(T1, 'https://idp', `race-${i}`, id, at())));
  assert.equal(got.filter(Boolean).length, 1, JSON.stringify(got));
  const rows = await t.db.async.all(t.db.k.selectFrom('oidc_links').select('sub').where('tenant_id', '=', 1).where('user_id', '=', id));
  assert.equal(rows.length, 1);
});

test("two tenants: a link is found, held and touched only in its account's tenant", async () => {
  const users = new UsersRepo(t.db);
  const one = await users.insert(T1, { email: 'same@example.com', username: 'same', role: 'user', password_hash: null });
  const two = await users.insert(T2, { email: 'same@example.com', username: 'same', role: 'user', password_hash: null });
  assert.equal((await repo.userByEmail(T2, 'SAME@example.com'))?.id, two);
  assert.equal(await repo.link(T2, 'https://idp', 'sub-t2', two, at()), true);
  assert.equal(await repo.linkedUser(T1, 'https://idp', 'sub-t2'), undefined, "tenant 1 does not sign in as tenant 2's account");
  assert.equal((await repo.linkedUser(T2, 'https://idp', 'sub-t2'))?.id, two);
  assert.equal(await repo.hasSubject(T1, 'https://idp', two), false);
  assert.equal(await repo.hasSubject(T2, 'https://idp', two), true);
  assert.equal(await repo.link(T1, 'https://idp', 'sub-t1', one, at()), true, "tenant 2's link does not hold tenant 1's account");
  await repo.touch(T1, 'https://idp', 'sub-t2', '2031-01-01T00:00:00.000Z');
  const row = await t.db.async.first(t.db.k.selectFrom('oidc_links').select('last_login_at').where('tenant_id', '=', 2).where('sub', '=', 'sub-t2'));
  assert.notEqual(row?.last_login_at, '2031-01-01T00:00:00.000Z');
});
