import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KeysRepo, type NewKey } from './keys.repo';
import { UsersRepo } from './users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: KeysRepo;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new KeysRepo(t.db);
});
after(() => t?.close());

const account = async (): Promise<number> =>
  new UsersRepo(t.db).insert({ email: `k${++user}@example.com`, username: `k${user}`, role: 'user', password_hash: null });

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
  const k1 = await repo.insert(key(a, 'one'));
  const k2 = await repo.insert(key(a, 'two'));
  const kb = await repo.insert(key(b, 'theirs', { machine_id: 'm1', secret_hash: 'legacy-hash' }));
  assert.equal(typeof k1, 'number');
  assert.deepEqual(
    (await repo.list(a)).map((k) => k.id),
    [k2, k1],
  );
  assert.equal((await repo.list(null)).length >= 3, true);
  assert.equal((await repo.byId(k1))?.name, 'one');
  assert.equal((await repo.byId(k2))?.name, 'two');
  assert.equal((await repo.legacy('m1', 'legacy-hash'))?.id, kb);
  assert.equal(await repo.legacy('m2', 'legacy-hash'), undefined);
  await repo.used(k1, '2026-12-05T11:00:00.000Z', '10.0.0.1');
  await repo.used(k1, '2026-12-05T12:00:00.000Z');
  const used = await repo.byId(k1);
  assert.deepEqual([used?.last_used_at, used?.last_used_ip], ['2026-12-05T12:00:00.000Z', '10.0.0.1'], 'a use without an address keeps the last one');
});

test('revokes racing: exactly one revokes the key (and is audited), the others see it revoked', async () => {
  const a = await account();
  const id = await repo.insert(key(a, 'raced'));
  const got = await Promise.all(Array.from({ length: 5 }, (_, i) => repo.revoke(id, `2026-12-05T14:00:0${i}.000Z`)));
  assert.equal(got.filter((g) => g.revoked).length, 1, JSON.stringify(got.map((g) => g.revoked)));
  assert.equal(new Set(got.map((g) => g.row?.revoked_at)).size, 1, 'every caller sees the one revocation');
  assert.deepEqual(await repo.revoke(999_999, '2026-12-05T15:00:00.000Z'), { row: undefined, revoked: false });
});
