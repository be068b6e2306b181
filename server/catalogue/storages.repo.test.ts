/**
 * The storages repository on this run's database (TEST_DATABASE=postgres: PostgreSQL): reads answer from
 * the in-memory copy, every write is awaited and seen by the next read, and the read-decide-writes (a
 * name free, the first storage, a home folder granted once) hold when callers race.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase, type TenantScope } from '../db';
import { StoragesRepo, newUid } from './storages.repo';
import { UsersRepo } from '../auth/users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { tempDir } from '../../test/helpers/tools';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

const row = (name: string) => ({
  uid: newUid(),
  name,
  driver: 'local',
  config: '{}',
  mount_path: '/',
  sync_mode: 'poll' as const,
  sync_interval_s: 900,
  enabled: 1,
  read_only: 0,
  rbac_enabled: 0,
  replica_target_id: null,
});

let t: TestDb;
let repo: StoragesRepo;
before(async () => {
  t = await openTestDb();
  repo = new StoragesRepo(t.db);
  await repo.load();
});
after(() => t?.close());

test('creates racing: one name is created once, and only one of the first storages is the first', async () => {
  const made = await Promise.all([repo.insert(T1, row('Same')), repo.insert(T1, row('Same')), repo.insert(T1, row('SAME')), repo.insert(T1, row('Other'))]);
  assert.equal(made.filter((m) => m && repo.byId(T1, m.id)?.name.toLowerCase() === 'same').length, 1, 'one "Same" created, the others refused');
  assert.equal(made[3] && repo.byId(T1, made[3].id)?.name, 'Other');
  assert.equal(made.filter((m) => m?.first).length, 1, 'exactly one was the first storage');
  assert.equal(await repo.insert(T1, row(repo.byId(T1, made[3]!.id)!.uid)), undefined, 'another storage’s uid is taken as a name');
});

test('writes are seen by the next read; rows are shared and frozen', async () => {
  const { id } = (await repo.insert(T1, row('Photos')))!;
  assert.equal(repo.byNameOrUid(T1, 'photos')?.id, id, 'names match case-insensitively, like NOCASE');
  const uid = repo.byId(T1, id)!.uid;
  assert.equal(repo.byNameOrUid(T1, uid)?.name, 'Photos');
  assert.ok(Object.isFrozen(repo.byId(T1, id)), 'shared rows cannot be changed by a caller');
  assert.equal(repo.nameTaken(T1, 'PHOTOS'), true);
  assert.equal(repo.nameTaken(T1, 'Photos', id), false, 'its own name is free for itself');

  assert.equal(await repo.update(T1, id, { name: 'Pictures' }), true);
  assert.equal(repo.byNameOrUid(T1, 'Photos'), undefined, 'a rename is seen by the next lookup');
  assert.equal(repo.byNameOrUid(T1, 'PICTURES')?.id, id);
  await repo.setStatus(T1, id, 'offline', 'gone');
  assert.deepEqual([repo.byId(T1, id)?.status, repo.byId(T1, id)?.status_reason], ['offline', 'gone']);
  await repo.markSynced(T1, id);
  assert.ok(repo.byId(T1, id)?.last_sync_at);
  await repo.replaceGrants(T1, id, [{ user_id: null, group: 'staff', level: 'editor' }]);
  assert.deepEqual(
    repo.grants(T1, id).map((g) => g.group),
    ['staff'],
  );
  assert.equal(repo.allGrants(T1).get(id)?.length, 1);
  await repo.delete(T1, id);
  assert.equal(repo.byId(T1, id), undefined);
  assert.deepEqual(repo.grants(T1, id), []);
});

test('renames racing to one name: one wins, the other is refused and keeps its name', async () => {
  const a = (await repo.insert(T1, row('Left')))!.id;
  const b = (await repo.insert(T1, row('Right')))!.id;
  const done = await Promise.all([repo.update(T1, a, { name: 'Middle' }), repo.update(T1, b, { name: 'middle' })]);
  assert.deepEqual(done.filter(Boolean).length, 1);
  assert.deepEqual([repo.byId(T1, a)!.name, repo.byId(T1, b)!.name].sort(), done[0] ? ['Middle', 'Right'] : ['Left', 'middle']);
});

test('status reports racing for one storage: the last one called is the one stored and kept', async () => {
  const id = (await repo.insert(T1, row('Flappy')))!.id;
  await Promise.all([
    repo.setStatus(T1, id, 'online', null),
    repo.setStatus(T1, id, 'offline', 'gone'),
    repo.setStatus(T1, id, 'online', null),
    repo.setStatus(T1, id, 'offline', 'gone again'),
  ]);
  assert.deepEqual([repo.byId(T1, id)?.status, repo.byId(T1, id)?.status_reason], ['offline', 'gone again']);
  const [stored] = await t.db.async.sql<{ status: string; status_reason: string }>('SELECT status, status_reason FROM storages WHERE id = ?', [id]);
  assert.deepEqual([stored.status, stored.status_reason], ['offline', 'gone again']);
});

test('a home folder granted by callers racing is granted once', async () => {
  const sid = (await repo.insert(T1, row('Homes')))!.id;
  const user = Number(
    (
      await t.db.async.sql<{ id: number }>(
        "INSERT INTO users (email, username, role, created_at, updated_at) VALUES ('h@example.test', 'h', 'user', ?, ?) RETURNING id",
        [new Date().toISOString(), new Date().toISOString()],
      )
    )[0].id,
  );
  const added = await Promise.all([1, 2, 3].map(() => repo.grantFolder(T1, sid, user, 'Users/h', 'editor')));
  assert.equal(added.filter(Boolean).length, 1);
  assert.deepEqual(
    repo.grants(T1, sid).map((g) => [g.user_id, g.path]),
    [[user, 'Users/h']],
  );
  assert.equal(await repo.unlinkReplicaTarget(T1, 999), 0);
});

test('two tenants: the same name in each; another tenant’s storage and grants are neither listed, found, changed, deleted, counted nor granted', async () => {
  const person = async (s: TenantScope, n: string) => {
    const at = new Date().toISOString();
    const [u] = await t.db.async.sql<{ id: number | string }>(
      "INSERT INTO users (tenant_id, email, username, role, created_at, updated_at) VALUES (?, ?, ?, 'user', ?, ?) RETURNING id",
      [s.tenant_id, `${n}@example.test`, n, at, at],
    );
    return Number(u.id);
  };
  const one = (await repo.insert(T1, row('Shared')))!;
  const two = await repo.insert(T2, row('SHARED'));
  assert.ok(two, 'a name is unique per tenant, not across the installation');
  assert.equal(two.first, true, 'tenant 1’s storages do not count in tenant 2: its first is its first');
  assert.equal(await repo.insert(T2, row('shared')), undefined, 'and still unique (without case) inside one');
  const uid2 = repo.byId(T2, two.id)!.uid;

  assert.equal(repo.byNameOrUid(T1, 'shared')?.id, one.id);
  assert.equal(repo.byNameOrUid(T2, 'shared')?.id, two.id);
  assert.equal(repo.byId(T1, two.id), undefined, 'not found by id');
  assert.equal(repo.byUid(T1, uid2), undefined, 'nor by uid');
  assert.equal(repo.byNameOrUid(T1, uid2), undefined, 'nor by its uid as a name');
  assert.equal(repo.nameTaken(T1, uid2), false);
  assert.ok(!repo.all(T1).some((s) => s.id === two.id), 'not listed');
  assert.deepEqual(
    repo.all(T2).map((s) => s.id),
    [two.id],
  );

  const p1 = await person(T1, 'ann');
  const p2 = await person(T2, 'ann');
  assert.equal(await repo.replaceGrants(T2, two.id, [{ user_id: p2, group: null, level: 'editor' }]), true);
  assert.equal(await repo.replaceGrants(T1, two.id, [{ user_id: null, group: 'staff', level: 'viewer' }]), false, 'another tenant’s storage is not granted');
  assert.equal(await repo.replaceGrants(T2, two.id, [{ user_id: p1, group: null, level: 'viewer' }]), false, 'nor another tenant’s person');
  assert.equal(await repo.grantFolder(T1, two.id, p1, 'Users/ann', 'editor'), false);
  assert.equal(await repo.grantFolder(T2, two.id, p1, 'Users/ann', 'editor'), false);
  assert.equal(await repo.grantFolder(T1, one.id, p2, 'Users/ann', 'editor'), false);
  assert.deepEqual(repo.grants(T1, two.id), [], 'its grants are not read from another tenant');
  assert.equal(repo.allGrants(T1).has(two.id), false);
  assert.deepEqual(
    repo.grants(T2, two.id).map((g) => [g.user_id, g.level]),
    [[p2, 'editor']],
  );
  const stored = await t.db.async.sql<{ tenant_id: number | string }>('SELECT tenant_id FROM storage_grants WHERE tenant_id = ? AND storage_id = ?', [
    2,
    two.id,
  ]);
  assert.deepEqual(
    stored.map((g) => Number(g.tenant_id)),
    [2],
    'the grant row is in its storage’s tenant',
  );

  assert.equal(await repo.update(T1, two.id, { name: 'Taken over' }), false, 'not changed');
  await repo.setStatus(T1, two.id, 'offline', 'gone');
  await repo.markSynced(T1, two.id);
  await repo.delete(T1, two.id);
  const kept = repo.byId(T2, two.id);
  assert.deepEqual([kept?.name, kept?.status, kept?.last_sync_at], ['SHARED', 'unknown', null], 'nor marked, nor deleted');
  assert.equal(repo.byId(T1, one.id)?.name, 'Shared');
  await repo.delete(T2, two.id);
  assert.equal(repo.byId(T2, two.id), undefined);
});

test('SQLite: a write through another repository (a person deleted, their grants going by cascade) is seen by the next read', {
  skip: process.env.TEST_DATABASE === 'postgres' ? 'SQLite only (PostgreSQL re-reads on the change channel)' : false,
}, async () => {
  const users = new UsersRepo(t.db);
  const id = (await repo.insert(T1, row('Cascade')))!.id;
  const ann = await users.insert(T1, { email: 'gone@example.test', username: 'gone', role: 'user', password_hash: null });
  assert.ok(await repo.grantFolder(T1, id, ann, 'ann', 'editor'));
  assert.deepEqual(
    repo.grants(T1, id).map((g) => g.user_id),
    [ann],
  );
  const counted = t.db.writes!();
  assert.equal(typeof (await users.delete(T1, ann)), 'object', 'deleted');
  assert.ok(t.db.writes!() > counted, 'the database layer counted the delete');
  assert.deepEqual(repo.grants(T1, id), [], 'the cascade is seen without waiting');
  await repo.delete(T1, id);
});

test('SQLite: another connection’s commits and writes beside the repository are seen by the next read', {
  skip: process.env.TEST_DATABASE === 'postgres' ? 'SQLite only (its data_version)' : false,
}, async () => {
  const dir = tempDir();
  const file = join(dir.dir, 'db.sqlite');
  const db = openDatabase(file);
  const other = openDatabase(file); // stands for a CLI command run beside the server
  try {
    const mine = new StoragesRepo(db);
    await mine.load();
    const id = (await mine.insert(T1, row('Photos')))!.id;
    // A write on this connection outside the repository (a person deleted: their grants go by cascade).
    await db.async.sql('UPDATE storages SET last_sync_at = ? WHERE id = ?', ['2026-11-27T00:00:00.000Z', id]);
    assert.equal(mine.byId(T1, id)?.last_sync_at, '2026-11-27T00:00:00.000Z');

    const id2 = (await new StoragesRepo(other).insert(T1, row('Music')))!.id;
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(mine.byNameOrUid(T1, 'music')?.id, id2, 'another connection’s commit is seen');
    other.sqlite.prepare('DELETE FROM storages WHERE id = ?').run(id);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(mine.byId(T1, id), undefined);
    assert.deepEqual(
      mine.all(T1).map((s) => s.name),
      ['Music'],
    );
  } finally {
    await other.close();
    await db.close();
    dir.cleanup();
  }
});
