/**
 * The storages repository on this run's database (TEST_DATABASE=postgres: PostgreSQL): reads answer from
 * the in-memory copy, every write is awaited and seen by the next read, and the read-decide-writes (a
 * name free, the first storage, a home folder granted once) hold when callers race.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../db';
import { StoragesRepo, newUid } from './storages.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { tempDir } from '../../test/helpers/tools';

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
  const made = await Promise.all([repo.insert(row('Same')), repo.insert(row('Same')), repo.insert(row('SAME')), repo.insert(row('Other'))]);
  assert.equal(made.filter((m) => m && repo.byId(m.id)?.name.toLowerCase() === 'same').length, 1, 'one "Same" created, the others refused');
  assert.equal(made[3] && repo.byId(made[3].id)?.name, 'Other');
  assert.equal(made.filter((m) => m?.first).length, 1, 'exactly one was the first storage');
  assert.equal(await repo.insert(row(repo.byId(made[3]!.id)!.uid)), undefined, 'another storage’s uid is taken as a name');
});

test('writes are seen by the next read; rows are shared and frozen', async () => {
  const { id } = (await repo.insert(row('Photos')))!;
  assert.equal(repo.byNameOrUid('photos')?.id, id, 'names match case-insensitively, like NOCASE');
  const uid = repo.byId(id)!.uid;
  assert.equal(repo.byNameOrUid(uid)?.name, 'Photos');
  assert.ok(Object.isFrozen(repo.byId(id)), 'shared rows cannot be changed by a caller');
  assert.equal(repo.nameTaken('PHOTOS'), true);
  assert.equal(repo.nameTaken('Photos', id), false, 'its own name is free for itself');

  assert.equal(await repo.update(id, { name: 'Pictures' }), true);
  assert.equal(repo.byNameOrUid('Photos'), undefined, 'a rename is seen by the next lookup');
  assert.equal(repo.byNameOrUid('PICTURES')?.id, id);
  await repo.setStatus(id, 'offline', 'gone');
  assert.deepEqual([repo.byId(id)?.status, repo.byId(id)?.status_reason], ['offline', 'gone']);
  await repo.markSynced(id);
  assert.ok(repo.byId(id)?.last_sync_at);
  await repo.replaceGrants(id, [{ user_id: null, group: 'staff', level: 'editor' }]);
  assert.deepEqual(
    repo.grants(id).map((g) => g.group),
    ['staff'],
  );
  assert.equal(repo.allGrants().get(id)?.length, 1);
  await repo.delete(id);
  assert.equal(repo.byId(id), undefined);
  assert.deepEqual(repo.grants(id), []);
});

test('renames racing to one name: one wins, the other is refused and keeps its name', async () => {
  const a = (await repo.insert(row('Left')))!.id;
  const b = (await repo.insert(row('Right')))!.id;
  const done = await Promise.all([repo.update(a, { name: 'Middle' }), repo.update(b, { name: 'middle' })]);
  assert.deepEqual(done.filter(Boolean).length, 1);
  assert.deepEqual([repo.byId(a)!.name, repo.byId(b)!.name].sort(), done[0] ? ['Middle', 'Right'] : ['Left', 'middle']);
});

test('status reports racing for one storage: the last one called is the one stored and kept', async () => {
  const id = (await repo.insert(row('Flappy')))!.id;
  await Promise.all([
    repo.setStatus(id, 'online', null),
    repo.setStatus(id, 'offline', 'gone'),
    repo.setStatus(id, 'online', null),
    repo.setStatus(id, 'offline', 'gone again'),
  ]);
  assert.deepEqual([repo.byId(id)?.status, repo.byId(id)?.status_reason], ['offline', 'gone again']);
  const [stored] = await t.db.async.sql<{ status: string; status_reason: string }>('SELECT status, status_reason FROM storages WHERE id = ?', [id]);
  assert.deepEqual([stored.status, stored.status_reason], ['offline', 'gone again']);
});

test('a home folder granted by callers racing is granted once', async () => {
  const sid = (await repo.insert(row('Homes')))!.id;
  const user = Number(
    (
      await t.db.async.sql<{ id: number }>(
        "INSERT INTO users (email, username, role, created_at, updated_at) VALUES ('h@example.test', 'h', 'user', ?, ?) RETURNING id",
        [new Date().toISOString(), new Date().toISOString()],
      )
    )[0].id,
  );
  const added = await Promise.all([1, 2, 3].map(() => repo.grantFolder(sid, user, 'Users/h', 'editor')));
  assert.equal(added.filter(Boolean).length, 1);
  assert.deepEqual(
    repo.grants(sid).map((g) => [g.user_id, g.path]),
    [[user, 'Users/h']],
  );
  assert.equal(await repo.unlinkReplicaTarget(999), 0);
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
    const id = (await mine.insert(row('Photos')))!.id;
    // A write on this connection outside the repository (a person deleted: their grants go by cascade).
    await db.async.sql('UPDATE storages SET last_sync_at = ? WHERE id = ?', ['2026-11-27T00:00:00.000Z', id]);
    assert.equal(mine.byId(id)?.last_sync_at, '2026-11-27T00:00:00.000Z');

    const id2 = (await new StoragesRepo(other).insert(row('Music')))!.id;
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(mine.byNameOrUid('music')?.id, id2, 'another connection’s commit is seen');
    other.sqlite.prepare('DELETE FROM storages WHERE id = ?').run(id);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(mine.byId(id), undefined);
    assert.deepEqual(
      mine.all().map((s) => s.name),
      ['Music'],
    );
  } finally {
    await other.close();
    await db.close();
    dir.cleanup();
  }
});
