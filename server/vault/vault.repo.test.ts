import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { VaultRepo, type VaultRow } from './vault.repo';
import { EncryptedRoots } from '../catalogue/encrypted-roots';
import { UsersRepo } from '../auth/users.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';
import { sqlRows } from '../../test/helpers/sql';
import { DEFAULT_TENANT as T1, type TenantScope } from '../db';
import type { StorageRef } from '../catalogue';

const T2: TenantScope = { tenant_id: 2 };
let t: TestDb;
let repo: VaultRepo;
let storage: StorageRef;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new VaultRepo(t.db);
  storage = { id: await testStorage(t.db), ...T1 };
});
after(() => t?.close());

const account = async (s: TenantScope = T1): Promise<number> =>
  new UsersRepo(t.db).insert(s, { email: `v${++user}@example.com`, username: `v${user}`, role: 'user', password_hash: null });
const b64u = (n: number) => randomBytes(n).toString('base64url');
const vault = (user_id: number): Omit<VaultRow, 'tenant_id'> => ({
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
  assert.equal(await repo.create(T1, vault(a)), true);
  assert.equal(await repo.create(T1, vault(a)), false);
  assert.deepEqual([...(await repo.publicKeys(T1, [a, b])).keys()], [a]);
  const made = await repo.createFolder(storage, 'Vault', a, 'now');
  assert.equal(typeof made, 'number');
  const id = { id: made as number, ...T1 };
  assert.equal(await repo.createFolder(storage, 'Vault', a, 'now'), 'taken');
  await repo.setMembers(id, 1, keys([a]));
  await repo.setMembers(id, 2, keys([a, b]));
  await assert.rejects(repo.setMembers(id, 2, keys([a])), /conflict/);
  assert.deepEqual(
    (await repo.keysOf(id, a)).map((k) => k.version),
    [1, 2],
  );
  const roots = new EncryptedRoots(
    t.db,
    () => undefined,
    () => [T1],
  );
  await roots.start();
  const r = roots.rootOf(storage.id, 'Vault/x/y')!;
  assert.deepEqual([r.id, r.tenant_id, r.key_version, [...r.members].sort()], [id.id, 1, 2, [a, b].sort()]);
  assert.equal(roots.rootOf(storage.id, 'Vaulted'), null);
  assert.deepEqual(
    roots.grants(storage.id).map((g) => [g.user_id, g.path, g.level]),
    [
      [a, 'Vault', 'editor'],
      [b, 'Vault', 'editor'],
    ].sort((x, y) => (x[0] as number) - (y[0] as number)),
  );
  await repo.setMembers(id, 3, keys([a]));
  assert.deepEqual(await repo.keysOf(id, b), [], "a removed member's keys are deleted");
  await roots.changed();
  assert.deepEqual([...roots.rootOf(storage.id, 'Vault')!.members], [a]);
});

test('five rotations racing to the same next version: exactly one commits', async () => {
  const a = await account();
  await repo.create(T1, vault(a));
  const id = { id: (await repo.createFolder(storage, `Race${a}`, a, 'now')) as number, ...T1 };
  await repo.setMembers(id, 1, keys([a]));
  const got = await Promise.allSettled(Array.from({ length: 5 }, () => repo.setMembers(id, 2, keys([a]))));
  assert.equal(got.filter((g) => g.status === 'fulfilled').length, 1, JSON.stringify(got.map((g) => (g.status === 'rejected' ? String(g.reason) : 'ok'))));
  assert.equal((await repo.folder(T1, id.id))?.key_version, 2);
  assert.deepEqual(
    (await repo.keysOf(id, a)).map((k) => k.version),
    [1, 2],
  );
});

test('an encrypted thumbnail is replaced in place and goes with its node', async () => {
  const [id] = await testNodes(t.db, storage, [{ path: `Thumbs/${b64u(6)}` }]);
  const node = { id, ...T1 };
  await repo.putThumb(node, 'first', 'now');
  await repo.putThumb(node, 'second', 'now');
  assert.equal(await repo.thumb(node), 'second');
  await sqlRows(t.db, 'DELETE FROM nodes WHERE id = ? AND tenant_id = 1', id);
  assert.equal(await repo.thumb(node), undefined);
});

test('tenants: another tenant’s vault, people, folder, keys and thumbnail are neither found, listed, counted as members nor written', async () => {
  const [a, b] = [await account(), await account()];
  const x = await account(T2);
  for (const [id, s] of [
    [a, T1],
    [b, T1],
    [x, T2],
  ] as const)
    assert.equal(await repo.create(s, vault(id)), true);
  // Vaults and people: only the scope's.
  assert.equal(await repo.vault(T2, a), undefined);
  assert.equal((await repo.vault(T2, x))?.tenant_id, 2);
  await repo.rewrap(T2, a, { kdf: '{"x":1}', wrapped_private_key: 'forged', auth_hash: 'forged', updated_at: 'later' });
  assert.equal((await repo.vault(T1, a))?.auth_hash, 'a', 'a rewrap naming another tenant changes nothing');
  const people = (s: TenantScope, caller: number) => repo.people(s, caller, '', 100).then((p) => p.map((r) => r.id));
  assert.ok((await people(T1, a)).includes(b));
  assert.ok(!(await people(T1, a)).includes(x), 'tenant 2’s person is not offered to tenant 1');
  assert.deepEqual(await people(T2, x), [], 'nor tenant 1’s to tenant 2');
  assert.deepEqual([...(await repo.publicKeys(T1, [a, x])).keys()], [a], 'another tenant’s person has no vault here');

  // A folder on tenant 2's storage is tenant 2's, and so are its keys.
  const s2: StorageRef = { id: await testStorage(t.db, 'Files', T2), ...T2 };
  const theirs = { id: (await repo.createFolder(s2, 'Secret', x, 'now')) as number, ...T2 };
  await repo.setMembers(theirs, 1, keys([x]));
  const mine = { id: (await repo.createFolder(storage, `Mine${a}`, a, 'now')) as number, ...T1 };
  await repo.setMembers(mine, 1, keys([a]));
  assert.equal((await repo.folder(T2, theirs.id))?.tenant_id, 2);
  assert.equal(await repo.folder(T1, theirs.id), undefined);
  assert.deepEqual(await repo.keysOf({ ...theirs, tenant_id: 1 }, x), []);
  await assert.rejects(repo.setMembers({ ...theirs, tenant_id: 1 }, 2, keys([a])), /not_found/, 'members set through another tenant: not found');
  assert.equal((await repo.folder(T2, theirs.id))?.key_version, 1);
  await repo.place([{ ...theirs, tenant_id: 1, rel: 'Moved' }]);
  await repo.drop([{ ...theirs, tenant_id: 1 }]);
  assert.equal((await repo.folder(T2, theirs.id))?.rel, 'Secret', 'neither moved nor dropped through another tenant');

  // The roots index reads the tenants it is given, each root with its tenant.
  const only1 = new EncryptedRoots(
    t.db,
    () => undefined,
    () => [T1],
  );
  await only1.start();
  assert.equal(only1.byId(theirs.id), undefined);
  assert.equal(only1.byId(mine.id)?.tenant_id, 1);
  const both = new EncryptedRoots(
    t.db,
    () => undefined,
    () => [T1, T2],
  );
  await both.start();
  assert.deepEqual([both.byId(theirs.id)?.tenant_id, [...(both.byId(theirs.id)?.members ?? [])]], [2, [x]]);

  // A thumbnail: stored in its node's tenant; neither read nor replaced through another.
  const [n2] = await testNodes(t.db, s2, [{ path: `Secret/${b64u(6)}` }]);
  await repo.putThumb({ id: n2, ...T2 }, 'theirs', 'now');
  assert.equal(await repo.thumb({ id: n2, ...T1 }), undefined);
  await repo.putThumb({ id: n2, ...T1 }, 'forged', 'now');
  assert.equal(await repo.thumb({ id: n2, ...T2 }), 'theirs');
});
