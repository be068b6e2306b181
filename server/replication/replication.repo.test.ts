import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplicationRepo, newTargetUid } from './replication.repo';
import { StoragesRepo } from '../catalogue/storages.repo';
import { DEFAULT_TENANT } from '../db';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: ReplicationRepo;
let names = 0;
before(async () => {
  t = await openTestDb();
  repo = new ReplicationRepo(t.db);
});
after(() => t?.close());

const target = (name = `nas${++names}`) => ({ uid: newTargetUid(), name, driver: 'local', config: '{}', mode: 'async' as const, enabled: 1 });
const failure = (storage_id: number, rel: string, message = 'boom') => ({
  storage_id,
  rel,
  op: 'write' as const,
  to_rel: null,
  from_rel: null,
  code: 'REPLICA_WRITE_FAIL' as const,
  message,
});

test('targets, a storage linked to one, and the counts come back as numbers on both databases', async () => {
  const id = await repo.insertTarget(target('home-nas'));
  assert.equal(typeof id, 'number');
  assert.equal(await repo.insertTarget(target('home-nas')), 'name_taken');
  const sid = await testStorage(t.db, 'Linked');
  await new StoragesRepo(t.db).update(DEFAULT_TENANT, sid, { replica_target_id: id as number });
  const uid = (await repo.storage(sid))!.uid;
  assert.deepEqual(await repo.linkOf(uid), { storage_id: sid, storage: 'Linked', target_id: id, mode: 'async' });
  assert.deepEqual(await repo.linkOf(sid), await repo.linkOf(uid));
  assert.ok((await repo.linkedStorageIds()).includes(sid));
  assert.equal(await repo.patchTarget(id as number, { enabled: 0 }), true);
  assert.equal(await repo.linkOf(uid), null, 'a disabled target links nothing');
  assert.equal(await repo.patchTarget(id as number, { enabled: 1, mode: 'sync' }), true);
  assert.equal((await repo.linkOf(uid))?.mode, 'sync');

  await repo.recordFailure(failure(sid, 'a.txt'));
  await repo.recordFailure(failure(sid, 'b.txt'));
  assert.equal(await repo.unresolvedCount(), 2);
  assert.equal(await repo.resolve(sid, 'a.txt', 'write'), true);
  assert.equal(await repo.resolve(sid, 'a.txt', 'write'), false, 'resolved once');
  assert.equal(await repo.unresolvedCount(), 1);
  assert.equal(await repo.repairedSince('2000-01-01T00:00:00.000Z'), 1);
  const pending = await repo.oldestPending();
  assert.equal(typeof pending.queued, 'number');
  assert.equal(typeof pending.at, 'string');
  assert.deepEqual(await repo.unresolvedIds(), [(await repo.failureByKey(sid, 'b.txt', 'write'))!.id]);

  assert.equal(await repo.dropFailuresOfTarget(id as number), 2);
  await new StoragesRepo(t.db).update(DEFAULT_TENANT, sid, { replica_target_id: null });
  assert.equal(await repo.deleteTarget(id as number), true);
  assert.equal(await repo.deleteTarget(id as number), false);
});

test('a rule changed or deleted answers with the row as it is now, or nothing when it is gone', async () => {
  const r = await repo.insertRule({ path_pattern: '*/tmp/**', mode: 'skip', priority: 5, enabled: 1, description: null });
  assert.equal(r.path_pattern, '*/tmp/**');
  assert.equal((await repo.patchRule(r.id, { mode: 'mirror' }))?.mode, 'mirror');
  assert.equal((await repo.patchRule(r.id, {}))?.mode, 'mirror');
  assert.equal(await repo.deleteRule(r.id), true);
  assert.equal(await repo.patchRule(r.id, { mode: 'skip' }), undefined);
  assert.equal(await repo.deleteRule(r.id), false);
});

test('a failure recorded again only while open: a resolved row is not reopened by a late attempt', async () => {
  const sid = await testStorage(t.db, 'Late');
  assert.equal(await repo.recordIfOpen(failure(sid, 'x')), false, 'no row: nothing recorded');
  await repo.recordFailure(failure(sid, 'x'));
  assert.equal(await repo.recordIfOpen(failure(sid, 'x', 'again')), true);
  assert.equal((await repo.failureByKey(sid, 'x', 'write'))?.attempts, 2);
  await repo.resolve(sid, 'x', 'write');
  assert.equal(await repo.recordIfOpen(failure(sid, 'x', 'late')), false);
  const row = await repo.failureByKey(sid, 'x', 'write');
  assert.ok(row?.resolved_at, 'still resolved');
  assert.equal(row?.message, 'again');
});

test('sixteen failures of one path recorded at once: one opens it (one announcement), every attempt counts', async () => {
  const sid = await testStorage(t.db, 'Racing');
  for (const round of [1, 2, 3]) {
    const got = await Promise.all(Array.from({ length: 16 }, (_, i) => repo.recordFailure(failure(sid, 'same.bin', `attempt ${i}`))));
    assert.equal(got.filter((g) => g.opened).length, 1, `round ${round}: opened once`);
    assert.equal((await repo.failureByKey(sid, 'same.bin', 'write'))?.attempts, round * 16);
    await repo.resolve(sid, 'same.bin', 'write');
  }
});

test('two targets created at once under one name: one is created, the other told the name is taken', async () => {
  const got = await Promise.all(Array.from({ length: 6 }, () => repo.insertTarget(target('twin'))));
  assert.equal(got.filter((g) => typeof g === 'number').length, 1, JSON.stringify(got));
  assert.equal(got.filter((g) => g === 'name_taken').length, 5);
  const other = (await repo.insertTarget(target('other'))) as number;
  const renames = await Promise.all([repo.patchTarget(other, { name: 'twin' }), repo.patchTarget(other, { name: 'twin' })]);
  assert.deepEqual(renames, ['name_taken', 'name_taken']);
});
