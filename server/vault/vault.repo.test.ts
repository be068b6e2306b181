import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { VaultRepo, type VaultRow } from './vault.repo';
import { EncryptedRoots } from '../catalogue/encrypted-roots';
import { UsersRepo } from '../auth/users.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';
import { sqlRows } from '../../test/helpers/sql';

let t: TestDb;
let repo: VaultRepo;
let storage: number;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new VaultRepo(t.db);
  storage = await testStorage(t.db);
});
after(() => t?.close());

const account = async (): Promise<number> =>
  new UsersRepo(t.db).insert({ email: `v${++user}@example.com`, username: `v${user}`, role: 'user', password_hash: null });
const b64u = (n: number) => randomBytes(n).toString('base64url');
const vault = (user_id: number): VaultRow => ({
  user_id,
  kdf: '{}',
  public_key: b64u(65),
  wrapped_private_key: b64u(166),
  recovery_wrapped_private_key: b64u(166),
  auth_hash: 'a',
  recovery_auth_hash: 'r',
  created_at: 'now',
  updated_at: 'now',
});
const keys = (ids: number[]) => ids.map((user_id) => ({ user_id, wrapped_key: b64u(125) }));

test('a vault is created once; a folder place is taken once; members and keys follow each version', async () => {
  const [a, b] = [await account(), await account()];
  assert.equal(await repo.create(vault(a)), true);
  assert.equal(await repo.create(vault(a)), false);
  assert.deepEqual([...(await repo.publicKeys([a, b])).keys()], [a]);
  const id = await repo.createFolder(storage, 'Vault', a, 'now');
  assert.equal(typeof id, 'number');
  assert.equal(await repo.createFolder(storage, 'Vault', a, 'now'), 'taken');
  await repo.setMembers(id as number, 1, keys([a]));
  await repo.setMembers(id as number, 2, keys([a, b]));
  await assert.rejects(repo.setMembers(id as number, 2, keys([a])), /conflict/);
  assert.deepEqual(
    (await repo.keysOf(id as number, a)).map((k) => k.version),
    [1, 2],
  );
  const roots = new EncryptedRoots(t.db, () => undefined);
  await roots.start();
  const r = roots.rootOf(storage, 'Vault/x/y')!;
  assert.deepEqual([r.id, r.key_version, [...r.members].sort()], [id, 2, [a, b].sort()]);
  assert.equal(roots.rootOf(storage, 'Vaulted'), null);
  assert.deepEqual(
    roots.grants(storage).map((g) => [g.user_id, g.path, g.level]),
    [
      [a, 'Vault', 'editor'],
      [b, 'Vault', 'editor'],
    ].sort((x, y) => (x[0] as number) - (y[0] as number)),
  );
  await repo.setMembers(id as number, 3, keys([a]));
  assert.deepEqual(await repo.keysOf(id as number, b), [], "a removed member's keys are deleted");
  await roots.changed();
  assert.deepEqual([...roots.rootOf(storage, 'Vault')!.members], [a]);
});

test('five rotations racing to the same next version: exactly one commits', async () => {
  const a = await account();
  await repo.create(vault(a));
  const id = (await repo.createFolder(storage, `Race${a}`, a, 'now')) as number;
  await repo.setMembers(id, 1, keys([a]));
  const got = await Promise.allSettled(Array.from({ length: 5 }, () => repo.setMembers(id, 2, keys([a]))));
  assert.equal(got.filter((g) => g.status === 'fulfilled').length, 1, JSON.stringify(got.map((g) => (g.status === 'rejected' ? String(g.reason) : 'ok'))));
  assert.equal((await repo.folder(id))?.key_version, 2);
  assert.deepEqual(
    (await repo.keysOf(id, a)).map((k) => k.version),
    [1, 2],
  );
});

test('an encrypted thumbnail is replaced in place and goes with its node', async () => {
  const [node] = await testNodes(t.db, storage, [{ path: `Thumbs/${b64u(6)}` }]);
  await repo.putThumb(node, 'first', 'now');
  await repo.putThumb(node, 'second', 'now');
  assert.equal(await repo.thumb(node), 'second');
  await sqlRows(t.db, 'DELETE FROM nodes WHERE id = ?', node);
  assert.equal(await repo.thumb(node), undefined);
});
