import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../events';
import { FileLocksRepo, type LockRow } from './file-locks.repo';
import { FileLocks } from './file-locks';
import type { Tx, Unit } from '../db/async';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { StorageRef } from './storage-ref';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';

let t: TestDb;
let repo: FileLocksRepo;
before(async () => {
  t = await openTestDb();
  repo = new FileLocksRepo(t.db, new EventBus(t.db));
});
after(() => t?.close());

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };
/** The storages of these tests as FileLocks reads them (StoragesRepo in the service). */
const storagesOf = (...rows: Array<StorageRef & { name: string }>) => ({
  ofAnyTenant: (id: number) => rows.find((r) => r.id === id),
  everyTenant: () => rows,
});

const lock = (plugin: string, until: string | null = null): LockRow => ({
  plugin,
  plugin_label: plugin.toUpperCase(),
  reason: null,
  reason_text: null,
  until,
  token_hash: `h-${plugin}`,
  locked_by: null,
  locked_at: '2026-12-01T00:00:00.000Z',
});

test('a lock is stored per node, replaced, read with where it is, swept when due and dropped', async () => {
  const sid = await testStorage(t.db, 'Locks');
  const [a, ab, sib] = await testNodes(t.db, sid, [{ path: 'a', type: 'dir' }, { path: 'a/b.pdf' }, { path: 'a.txt' }]);
  const unit = <T>(body: (x: Tx) => Unit<T>) => t.db.async.unit(body);
  const mine = async () => (await repo.all([T1])).filter((r) => r.storage_id === sid);
  assert.deepEqual(await mine(), []);
  await unit((x) => repo.putIn(x, T1, ab, lock('sign')));
  await unit((x) => repo.putIn(x, T1, ab, lock('ocr')));
  await unit((x) => repo.putIn(x, T1, sib, lock('old', '2026-01-01T00:00:00.000Z')));
  await unit((x) => repo.putIn(x, T1, a, lock('later', '2099-01-01T00:00:00.000Z')));
  assert.equal((await t.db.async.read((x) => repo.atIn(x, { id: sid, ...T1 }, 'a/b.pdf')))?.plugin, 'ocr', 'the second lock replaced the first');
  assert.equal(await t.db.async.read((x) => repo.atIn(x, { id: sid, ...T1 }, 'nowhere')), undefined);
  assert.deepEqual(
    (await mine()).map((r) => [r.path, r.node_id, r.plugin]).sort(),
    [
      ['a', a, 'later'],
      ['a.txt', sib, 'old'],
      ['a/b.pdf', ab, 'ocr'],
    ],
    'every lock, expired ones too (the rules decide), with its node and path',
  );
  const now = '2026-12-05T00:00:00.000Z';
  assert.deepEqual(await t.db.async.read((x) => repo.dueIn(x, [T1], now)), [{ tenant_id: 1, storage_id: sid, path: 'a.txt', node_id: sib }]);
  assert.equal(await unit((x) => repo.dropIn(x, T1, sib)), true);
  assert.equal(await unit((x) => repo.dropIn(x, T1, sib)), false, 'gone already');
  assert.deepEqual((await mine()).map((r) => r.path).sort(), ['a', 'a/b.pdf']);
});

test('two apps locking one file at once: exactly one holds it, the other is refused', async () => {
  const sid = await testStorage(t.db, 'Race');
  await testNodes(t.db, sid, [{ path: 'contract.pdf' }]);
  const locks = new FileLocks(t.db, new EventBus(t.db), storagesOf({ id: sid, name: 'Race', ...T1 }), () => {});
  await locks.start();
  try {
    const got = await Promise.allSettled(['sign', 'ocr'].map((plugin) => locks.set(sid, 'contract.pdf', { plugin, label: plugin }, null)));
    assert.deepEqual(got.map((g) => g.status).sort(), ['fulfilled', 'rejected']);
    const won = got.find((g) => g.status === 'fulfilled') as PromiseFulfilledResult<{ lock: { plugin: string } }>;
    assert.equal((got.find((g) => g.status === 'rejected') as PromiseRejectedResult).reason.code, 'locked');
    assert.equal(locks.of(sid, 'contract.pdf')?.plugin, won.value.lock.plugin);
  } finally {
    locks.stop();
  }
});

test('tenants: another tenant’s lock is neither listed, found by path, replaced, swept nor dropped', async () => {
  const s1 = await testStorage(t.db, 'Same');
  const s2 = await testStorage(t.db, 'Same', T2);
  // Same paths in both tenants' storages; the nodes carry the storage's tenant once nodes are scoped.
  const [n1] = await testNodes(t.db, s1, [{ path: 'doc.pdf' }]);
  const [n2] = await testNodes(t.db, s2, [{ path: 'doc.pdf' }]);
  const unit = <T>(body: (x: Tx) => Unit<T>) => t.db.async.unit(body);
  await unit((x) => repo.putIn(x, T1, n1, lock('one', '2026-01-01T00:00:00.000Z')));
  await unit((x) => repo.putIn(x, T2, n2, lock('two', '2026-01-01T00:00:00.000Z')));
  const at = (s: StorageRef) => t.db.async.read((x) => repo.atIn(x, s, 'doc.pdf'));
  assert.equal((await at({ id: s1, ...T1 }))?.plugin, 'one');
  assert.equal((await at({ id: s2, ...T2 }))?.plugin, 'two');
  assert.equal(await at({ id: s2, ...T1 }), undefined, 'tenant 1 does not find tenant 2’s lock by its path');
  const of = async (tenants: TenantScope[]) => (await repo.all(tenants)).filter((r) => r.node_id === n1 || r.node_id === n2).map((r) => r.plugin);
  assert.deepEqual(await of([T1]), ['one']);
  assert.deepEqual(await of([T2]), ['two']);
  assert.deepEqual((await of([T1, T2])).sort(), ['one', 'two'], 'system work names every tenant');
  assert.deepEqual(await repo.all([]), []);
  // Written in the wrong tenant: neither replaced nor dropped.
  await unit((x) => repo.putIn(x, T1, n2, lock('thief')));
  assert.equal(await unit((x) => repo.dropIn(x, T1, n2)), false);
  assert.equal((await at({ id: s2, ...T2 }))?.plugin, 'two');
  const now = '2026-12-05T00:00:00.000Z';
  const due = async (tenants: TenantScope[]) => (await t.db.async.read((x) => repo.dueIn(x, tenants, now))).filter((r) => r.node_id === n1 || r.node_id === n2);
  assert.deepEqual(await due([T1]), [{ tenant_id: 1, storage_id: s1, path: 'doc.pdf', node_id: n1 }]);
  assert.equal(await repo.sweep([T1], now, () => []), 1, 'the sweep of tenant 1 removes its own expired lock only');
  assert.deepEqual(await of([T2]), ['two']);
  assert.equal(await repo.sweep([T2], now, () => []), 1);
  assert.deepEqual(await of([T1, T2]), []);
});
