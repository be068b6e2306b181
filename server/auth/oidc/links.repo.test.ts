import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OidcLinksRepo } from './links.repo';
import { UsersRepo } from '../users.repo';
import { openTestDb, type TestDb } from '../../../test/helpers/test-database';
import { DEFAULT_TENANT } from '../../db';

let t: TestDb;
let repo: OidcLinksRepo;
before(async () => {
  t = await openTestDb();
  repo = new OidcLinksRepo(t.db);
});
after(() => t?.close());

const at = () => new Date().toISOString();

test('a subject links once, finds its account, and the e-mail lookup ignores case', async () => {
  const id = await new UsersRepo(t.db).insert({ email: 'Ann@example.com', username: 'ann', role: 'user', password_hash: null });
  assert.equal((await repo.userByEmail(DEFAULT_TENANT, 'ann@example.com'))?.id, id);
  assert.equal(await repo.hasSubject('https://idp', id), false);
  assert.equal(await repo.link('https://idp', 'sub-1', id, at()), true);
  assert.equal(await repo.link('https://idp', 'sub-1', id, at()), true, 'the same subject again is fine');
  assert.equal(await repo.link('https://idp', 'sub-2', id, at()), false, 'another subject of the same issuer is refused');
  assert.equal(await repo.link('https://other-idp', 'sub-2', id, at()), true, 'another issuer may link');
  assert.equal((await repo.linkedUser('https://idp', 'sub-1'))?.id, id);
  assert.equal(await repo.linkedUser('https://idp', 'sub-2'), undefined);
  await repo.touch('https://idp', 'sub-1', '2030-01-01T00:00:00.000Z');
  const row = await t.db.async.first(t.db.k.selectFrom('oidc_links').select('last_login_at').where('sub', '=', 'sub-1'));
  assert.equal(row?.last_login_at, '2030-01-01T00:00:00.000Z');
});

test('eight subjects racing to link one account: exactly one wins', async () => {
  const id = await new UsersRepo(t.db).insert({ email: 'bo@example.com', username: 'bo', role: 'user', password_hash: null });
  const got = await Promise.all(Array.from({ length: 8 }, (_, i) => repo.link('https://idp', `race-${i}`, id, at())));
  assert.equal(got.filter(Boolean).length, 1, JSON.stringify(got));
  const rows = await t.db.async.all(t.db.k.selectFrom('oidc_links').select('sub').where('user_id', '=', id));
  assert.equal(rows.length, 1);
});
