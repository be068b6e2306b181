import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../events';
import { FileLocksRepo, type LockRow } from './file-locks.repo';
import { FileLocks } from './file-locks';
import type { Tx, Unit } from '../db/async';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';

let t: TestDb;
let repo: FileLocksRepo;
before(async () => {
  t = await openTestDb();
  repo = new FileLocksRepo(t.db, new EventBus(t.db));
});
after(() => t?.close());

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
  const mine = async () => (await repo.all()).filter((r) => r.storage_id === sid);
  assert.deepEqual(await mine(), []);
  await unit((x) => repo.putIn(x, ab, lock('sign')));
  await unit((x) => repo.putIn(x, ab, lock('ocr')));
  await unit((x) => repo.putIn(x, sib, lock('old', '2026-01-01T00:00:00.000Z')));
  await unit((x) => repo.putIn(x, a, lock('later', '2099-01-01T00:00:00.000Z')));
  assert.equal((await t.db.async.read((x) => repo.atIn(x, sid, 'a/b.pdf')))?.plugin, 'ocr', 'the second lock replaced the first');
  assert.equal(await t.db.async.read((x) => repo.atIn(x, sid, 'nowhere')), undefined);
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
  assert.deepEqual(await t.db.async.read((x) => repo.dueIn(x, now)), [{ storage_id: sid, path: 'a.txt', node_id: sib }]);
  assert.equal(await unit((x) => repo.dropIn(x, sib)), true);
  assert.equal(await unit((x) => repo.dropIn(x, sib)), false, 'gone already');
  assert.deepEqual((await mine()).map((r) => r.path).sort(), ['a', 'a/b.pdf']);
});

test('two apps locking one file at once: exactly one holds it, the other is refused', async () => {
  const sid = await testStorage(t.db, 'Race');
  await testNodes(t.db, sid, [{ path: 'contract.pdf' }]);
  const locks = new FileLocks(
    t.db,
    new EventBus(t.db),
    () => 'Race',
    () => {},
  );
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
