import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SshKeysRepo, type NewSshKey } from './ssh-keys.repo';
import { UsersRepo } from './users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: SshKeysRepo;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new SshKeysRepo(t.db);
});
after(() => t?.close());

/** A fresh account (ssh_keys rows reference users). */
const account = async (s: TenantScope = T1): Promise<number> =>
  new UsersRepo(t.db).insert(s, { email: `u${++user}@example.com`, username: `u${user}`, role: 'user', password_hash: null });

const key = (user_id: number, n: number): NewSshKey => ({
  user_id,
  name: `k${n}`,
  algo: 'ssh-ed25519',
  public_key: `AAAA${n}`,
  fingerprint: `SHA256:${n}`,
  created_at: new Date().toISOString(),
});

test('add refuses a duplicate and a full account; remove is per account and says what it removed', async () => {
  const a = await account();
  const b = await account();
  const id = await repo.add(T1, key(a, 1), 2);
  assert.equal(typeof id, 'number');
  assert.equal(await repo.add(T1, key(a, 1), 2), 'duplicate');
  assert.equal(typeof (await repo.add(T1, key(a, 2), 2)), 'number');
  assert.equal(await repo.add(T1, key(a, 3), 2), 'full');
  assert.equal(await repo.remove(T1, b, id as number), undefined, "another account's key is not removed");
  assert.deepEqual(await repo.remove(T1, a, id as number), { name: 'k1', fingerprint: 'SHA256:1' });
  assert.equal(await repo.remove(T1, a, id as number), undefined);
  assert.deepEqual(
    (await repo.list(T1, a)).map((k) => k.name),
    ['k2'],
  );
  assert.equal((await repo.byFingerprint(T1, a, 'SHA256:2'))?.public_key, 'AAAA2');
});

test('ten adds racing for the last places never pass the cap', async () => {
  const a = await account();
  for (let i = 0; i < 3; i++) await repo.add(T1, key(a, 100 + i), 5);
  const got = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => repo.add(T1, key(a, 200 + i), 5)));
  const added = got.filter((g) => g.status === 'fulfilled' && typeof g.value === 'number').length;
  assert.equal(added, 2, JSON.stringify(got.map((g) => (g.status === 'fulfilled' ? g.value : String(g.reason)))));
  assert.equal((await repo.list(T1, a)).length, 5);
});

test('two tenants: the same key in each; a scope lists, finds, touches and removes only its own', async () => {
  const a = await account(T1);
  const b = await account(T2);
  const one = (await repo.add(T1, key(a, 70), 5)) as number;
  const two = (await repo.add(T2, key(b, 70), 5)) as number;
  assert.equal(typeof two, 'number', 'the same key registers in both tenants');
  assert.deepEqual(await repo.list(T1, b), []);
  assert.equal(await repo.byFingerprint(T1, b, 'SHA256:70'), undefined);
  assert.equal((await repo.byFingerprint(T2, b, 'SHA256:70'))?.id, two);
  await repo.touch(T1, two, '2030-01-01T00:00:00.000Z');
  assert.equal(await repo.remove(T1, b, two), undefined, "tenant 1 cannot remove tenant 2's key");
  assert.deepEqual(
    (await repo.list(T2, b)).map((k) => [k.id, k.last_used_at]),
    [[two, null]],
  );
  assert.deepEqual(await repo.remove(T2, b, two), { name: 'k70', fingerprint: 'SHA256:70' });
  assert.deepEqual(
    (await repo.list(T1, a)).map((k) => k.id),
    [one],
  );
});
