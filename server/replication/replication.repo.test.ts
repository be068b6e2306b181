import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplicationRepo, newTargetUid } from './replication.repo';
import { StoragesRepo } from '../catalogue/storages.repo';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: ReplicationRepo;
let names = 0;
before(async () => {
  t = await openTestDb();
  repo = new ReplicationRepo(t.db);
});
after(() => t?.close());

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };
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
  const id = await repo.insertTarget(T1, target('home-nas'));
  assert.equal(typeof id, 'number');
  assert.equal(await repo.insertTarget(T1, target('home-nas')), 'name_taken');
  const sid = await testStorage(t.db, 'Linked');
  await new StoragesRepo(t.db).update(T1, sid, { replica_target_id: id as number });
  const uid = (await repo.storage(T1, sid))!.uid;
  assert.deepEqual(await repo.linkOf(T1, uid), { storage_id: sid, storage: 'Linked', target_id: id, mode: 'async' });
  assert.deepEqual(await repo.linkOf(T1, sid), await repo.linkOf(T1, uid));
  assert.ok((await repo.linkedStorageIds([T1])).includes(sid));
  assert.equal(await repo.patchTarget(T1, id as number, { enabled: 0 }), true);
  assert.equal(await repo.linkOf(T1, uid), null, 'a disabled target links nothing');
  assert.equal(await repo.patchTarget(T1, id as number, { enabled: 1, mode: 'sync' }), true);
  assert.equal((await repo.linkOf(T1, uid))?.mode, 'sync');

  await repo.recordFailure(T1, failure(sid, 'a.txt'));
  await repo.recordFailure(T1, failure(sid, 'b.txt'));
  assert.equal(await repo.unresolvedCount([T1]), 2);
  assert.equal(await repo.resolve(T1, sid, 'a.txt', 'write'), true);
  assert.equal(await repo.resolve(T1, sid, 'a.txt', 'write'), false, 'resolved once');
  assert.equal(await repo.unresolvedCount([T1]), 1);
  assert.equal(await repo.repairedSince([T1], '2000-01-01T00:00:00.000Z'), 1);
  const pending = await repo.oldestPending([T1]);
  assert.equal(typeof pending.queued, 'number');
  assert.equal(typeof pending.at, 'string');
  assert.deepEqual(await repo.unresolvedIds(T1), [(await repo.failureByKey(T1, sid, 'b.txt', 'write'))!.id]);

  assert.equal(await repo.dropFailuresOfTarget(T1, id as number), 2);
  await new StoragesRepo(t.db).update(T1, sid, { replica_target_id: null });
  assert.equal(await repo.deleteTarget(T1, id as number), true);
  assert.equal(await repo.deleteTarget(T1, id as number), false);
});

test('a rule changed or deleted answers with the row as it is now, or nothing when it is gone', async () => {
  const r = await repo.insertRule(T1, { path_pattern: '*/tmp/**', mode: 'skip', priority: 5, enabled: 1, description: null });
  assert.equal(r.path_pattern, '*/tmp/**');
  assert.equal((await repo.patchRule(T1, r.id, { mode: 'mirror' }))?.mode, 'mirror');
  assert.equal((await repo.patchRule(T1, r.id, {}))?.mode, 'mirror');
  assert.equal(await repo.deleteRule(T1, r.id), true);
  assert.equal(await repo.patchRule(T1, r.id, { mode: 'skip' }), undefined);
  assert.equal(await repo.deleteRule(T1, r.id), false);
});

test('a failure recorded again only while open: a resolved row is not reopened by a late attempt', async () => {
  const sid = await testStorage(t.db, 'Late');
  assert.equal(await repo.recordIfOpen(T1, failure(sid, 'x')), false, 'no row: nothing recorded');
  await repo.recordFailure(T1, failure(sid, 'x'));
  assert.equal(await repo.recordIfOpen(T1, failure(sid, 'x', 'again')), true);
  assert.equal((await repo.failureByKey(T1, sid, 'x', 'write'))?.attempts, 2);
  await repo.resolve(T1, sid, 'x', 'write');
  assert.equal(await repo.recordIfOpen(T1, failure(sid, 'x', 'late')), false);
  const row = await repo.failureByKey(T1, sid, 'x', 'write');
  assert.ok(row?.resolved_at, 'still resolved');
  assert.equal(row?.message, 'again');
});

test('sixteen failures of one path recorded at once: one opens it (one announcement), every attempt counts', async () => {
  const sid = await testStorage(t.db, 'Racing');
  for (const round of [1, 2, 3]) {
    const got = await Promise.all(Array.from({ length: 16 }, (_, i) => repo.recordFailure(T1, failure(sid, 'same.bin', `attempt ${i}`))));
    assert.equal(got.filter((g) => g.opened).length, 1, `round ${round}: opened once`);
    assert.equal((await repo.failureByKey(T1, sid, 'same.bin', 'write'))?.attempts, round * 16);
    await repo.resolve(T1, sid, 'same.bin', 'write');
  }
});

test('two targets created at once under one name: one is created, the other told the name is taken', async () => {
  const got = await Promise.all(Array.from({ length: 6 }, () => repo.insertTarget(T1, target('twin'))));
  assert.equal(got.filter((g) => typeof g === 'number').length, 1, JSON.stringify(got));
  assert.equal(got.filter((g) => g === 'name_taken').length, 5);
  const other = (await repo.insertTarget(T1, target('other'))) as number;
  const renames = await Promise.all([repo.patchTarget(T1, other, { name: 'twin' }), repo.patchTarget(T1, other, { name: 'twin' })]);
  assert.deepEqual(renames, ['name_taken', 'name_taken']);
});

test('tenants: the same target name in two tenants; another tenant’s target, rule, failure and storage are neither found, listed, changed, counted, linked nor dropped', async () => {
  const mine = (await repo.insertTarget(T1, target('backup'))) as number;
  const theirs = await repo.insertTarget(T2, target('backup'));
  assert.equal(typeof theirs, 'number', 'a name is unique per tenant');
  const other = theirs as number;
  assert.equal(await repo.target(T1, other), undefined);
  assert.equal((await repo.target(T2, other))?.tenant_id, 2);
  assert.ok(!(await repo.targets([T1])).some((x) => x.id === other));
  assert.deepEqual(
    (await repo.targets([T1, T2])).filter((x) => x.name === 'backup').map((x) => x.tenant_id),
    [1, 2],
  );
  assert.equal(await repo.patchTarget(T1, other, { enabled: 0 }), false);
  assert.equal(await repo.targetNameTaken(T2, 'twin'), false, 'tenant 1’s names are not tenant 2’s');

  const rule = await repo.insertRule(T2, { path_pattern: 'Docs/**', mode: 'skip', priority: 1, enabled: 1, description: null });
  assert.ok(!(await repo.rules(T1)).some((x) => x.id === rule.id));
  assert.equal(await repo.rule(T1, rule.id), undefined);
  assert.equal(await repo.patchRule(T1, rule.id, { mode: 'mirror' }), undefined);
  assert.equal(await repo.deleteRule(T1, rule.id), false);
  assert.equal((await repo.rule(T2, rule.id))?.mode, 'skip', 'unchanged');

  const sid = await testStorage(t.db, 'Docs', T2);
  await new StoragesRepo(t.db).update(T2, sid, { replica_target_id: other });
  assert.equal(await repo.storage(T1, sid), undefined);
  assert.equal(await repo.storageByName(T1, 'Docs'), undefined);
  assert.equal(await repo.linkOf(T1, sid), null);
  assert.equal((await repo.linkOf(T2, sid))?.target_id, other);
  assert.ok(!(await repo.linkedStorageIds([T1])).includes(sid));
  assert.ok((await repo.linkedStorageIds([T1, T2])).includes(sid));
  // A storage of tenant 2 linked to a target of tenant 1 (a forged id) links nothing.
  await new StoragesRepo(t.db).update(T2, sid, { replica_target_id: mine });
  assert.equal(await repo.linkOf(T2, sid), null);
  await new StoragesRepo(t.db).update(T2, sid, { replica_target_id: other });

  const { row } = await repo.recordFailure(T2, failure(sid, 'f.txt'));
  assert.equal(row.tenant_id, 2);
  await assert.rejects(
    repo.recordFailure(T1, failure(sid, 'f.txt')),
    (e: { code?: string }) => e.code === 'not_found',
    'another tenant’s key is not recorded over',
  );
  assert.equal(await repo.failure(T1, row.id), undefined);
  assert.equal(await repo.failureByKey(T1, sid, 'f.txt', 'write'), undefined);
  assert.ok(!(await repo.failures(T1, { limit: 500, offset: 0 })).some((f) => f.id === row.id));
  assert.ok(!(await repo.unresolvedIds(T1)).includes(row.id));
  const before = await repo.unresolvedCount([T1]);
  assert.equal(await repo.unresolvedCount([T1, T2]), before + 1);
  assert.equal(await repo.recordIfOpen(T1, failure(sid, 'f.txt')), false);
  assert.equal(await repo.resolve(T1, sid, 'f.txt', 'write'), false);
  await repo.dropFailure(T1, sid, 'f.txt', 'write');
  assert.equal(await repo.dropFailuresOfTarget(T1, other), 0);
  assert.equal(await repo.deleteTarget(T1, other), false);
  assert.equal((await repo.failure(T2, row.id))?.attempts, 1, 'tenant 2’s failure as it was');
  assert.equal(await repo.dropFailuresOfTarget(T2, other), 1);
  assert.equal(await repo.unresolvedCount([]), 0, 'no tenant: nothing');
});
