import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KeysRepo, type NewKey } from './keys.repo';
import { UsersRepo } from './users.repo';
import { DEFAULT_TENANT } from '../db';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

const T1 = DEFAULT_TENANT;

let t: TestDb;
let repo: KeysRepo;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new KeysRepo(t.db);
});
after(() => t?.close());

const account = async (): Promise<number> =>
  new UsersRepo(t.db).insert(T1, { email: `k${++user}@example.com`, username: `k${user}`, role: 'user', password_hash: null });

const key = (user_id: number, name: string, o: Partial<NewKey> = {}): NewKey => ({
  user_id,
  name,
  secret_hash: `h-${name}`,
  verbs: '["files:read"]',
  root_storage_id: null,
  root_rel: null,
  machine_id: null,
  created_by: user_id,
  created_at: '2026-12-05T10:00:00.000Z',
  expires_at: null,
  ...o,
});

test('keys by id and by person, newest first; a use records when and, when given, where', async () => {
  const a = await account();
  const b = await account();
  const k1 = await repo.insert(T1, key(a, 'one'));
  const k2 = await repo.insert(T1, key(a, 'two'));
  const kb = await repo.insert(T1, key(b, 'theirs', { machine_id: 'm1', secret_hash: 'legacy-hash' }));
  assert.equal(typeof k1, 'number');
  assert.deepEqual(
    (await repo.list(T1, a)).map((k) => k.id),
    [k2, k1],
  );
  assert.equal((await repo.list(T1, null)).length >= 3, true);
  assert.equal((await repo.byId(T1, k1))?.name, 'one');
  assert.equal((await repo.byId(T1, k2))?.name, 'two');
  assert.equal((await repo.legacy(T1, 'm1', 'legacy-hash'))?.id, kb);
  assert.equal(await repo.legacy(T1, 'm2', 'legacy-hash'), undefined);
  await repo.used(T1, k1, '2026-12-05T11:00:00.000Z', '10.0.0.1');
  await repo.used(T1, k1, '2026-12-05T12:00:00.000Z');
  const used = await repo.byId(T1, k1);
  assert.deepEqual([used?.last_used_at, used?.last_used_ip], ['2026-12-05T12:00:00.000Z', '10.0.0.1'], 'a use without an address keeps the last one');
});

test('revokes racing: exactly one revokes the key (and is audited), the others see it revoked', async () => {
  const a = await account();
  const id = await repo.insert(T1, key(a, 'raced'));
  const got = await Promise.all(Array.from({ length: 5 }, (_, i) => repo.revoke(T1, id, `2026-12-05T14:00:0${i}.000Z`)));
  assert.equal(got.filter((g) => g.revoked).length, 1, JSON.stringify(got.map((g) => g.revoked)));
  assert.equal(new Set(got.map((g) => g.row?.revoked_at)).size, 1, 'every caller sees the one revocation');
  assert.deepEqual(await repo.revoke(T1, 999_999, '2026-12-05T15:00:00.000Z'), { row: undefined, revoked: false });
});

test('another tenant’s key is not found, listed, used nor revoked by its id', async () => {
  const a = await account();
  const id = await repo.insert(T1, key(a, 'mine'));
  const T2 = { tenant_id: 2 };
  assert.equal(await repo.byId(T2, id), undefined);
  assert.deepEqual(await repo.list(T2, null), []);
  await repo.used(T2, id, '2099-01-01T00:00:00.000Z');
  assert.deepEqual(await repo.revoke(T2, id, '2026-12-05T15:00:00.000Z'), { row: undefined, revoked: false });
  const row = await repo.byId(T1, id);
  assert.deepEqual([row?.revoked_at, row?.last_used_at], [null, null], 'untouched for its own tenant');
});
