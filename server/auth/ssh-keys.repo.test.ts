import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SshKeysRepo, type NewSshKey } from './ssh-keys.repo';
import { UsersRepo } from './users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: SshKeysRepo;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new SshKeysRepo(t.db);
});
after(() => t?.close());

/** A fresh account (ssh_keys rows reference users). */
const account = async (): Promise<number> =>
  new UsersRepo(t.db).insert({ email: `u${++user}@example.com`, username: `u${user}`, role: 'user', password_hash: null });

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
  const id = await repo.add(key(a, 1), 2);
  assert.equal(typeof id, 'number');
  assert.equal(await repo.add(key(a, 1), 2), 'duplicate');
  assert.equal(typeof (await repo.add(key(a, 2), 2)), 'number');
  assert.equal(await repo.add(key(a, 3), 2), 'full');
  assert.equal(await repo.remove(b, id as number), undefined, "another account's key is not removed");
  assert.deepEqual(await repo.remove(a, id as number), { name: 'k1', fingerprint: 'SHA256:1' });
  assert.equal(await repo.remove(a, id as number), undefined);
  assert.deepEqual(
    (await repo.list(a)).map((k) => k.name),
    ['k2'],
  );
  assert.equal((await repo.byFingerprint(a, 'SHA256:2'))?.public_key, 'AAAA2');
});

test('ten adds racing for the last places never pass the cap', async () => {
  const a = await account();
  for (let i = 0; i < 3; i++) await repo.add(key(a, 100 + i), 5);
  const got = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => repo.add(key(a, 200 + i), 5)));
  const added = got.filter((g) => g.status === 'fulfilled' && typeof g.value === 'number').length;
  assert.equal(added, 2, JSON.stringify(got.map((g) => (g.status === 'fulfilled' ? g.value : String(g.reason)))));
  assert.equal((await repo.list(a)).length, 5);
});
