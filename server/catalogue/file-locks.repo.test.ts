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

test('a lock is stored per node, replaced, read for a subtree without the expired, swept when due and dropped', async () => {
  const sid = await testStorage(t.db, 'Locks');
  const [a, ab, sib] = await testNodes(t.db, sid, [{ path: 'a', type: 'dir' }, { path: 'a/b.pdf' }, { path: 'a.txt' }]);
  const unit = <T>(body: (x: Tx) => Unit<T>) => t.db.async.unit(body);
  assert.deepEqual(await repo.storages(), []);
  assert.equal(await repo.nextExpiry(), null);
  await unit((x) => repo.putIn(x, ab, lock('sign')));
  await unit((x) => repo.putIn(x, ab, lock('ocr')));
  await unit((x) => repo.putIn(x, sib, lock('old', '2026-01-01T00:00:00.000Z')));
  await unit((x) => repo.putIn(x, a, lock('later', '2099-01-01T00:00:00.000Z')));
  assert.equal((await t.db.async.read((x) => repo.atIn(x, sid, 'a/b.pdf')))?.plugin, 'ocr', 'the second lock replaced the first');
  assert.equal(repo.atSync(sid, 'a.txt')?.plugin, 'old', 'expired ones too (the rules decide)');
  assert.equal(repo.atSync(sid, 'nowhere'), undefined);
  const now = '2026-12-05T00:00:00.000Z';
  assert.deepEqual(
    (await t.db.async.read((x) => repo.belowIn(x, sid, 'a', now))).map((r) => r.path).sort(),
    ['a', 'a/b.pdf'],
    'not the sibling sharing the name prefix',
  );
  assert.deepEqual(
    repo
      .belowSync(sid, '', now)
      .map((r) => r.path)
      .sort(),
    ['a', 'a/b.pdf'],
    'the expired one is left out',
  );
  assert.deepEqual(await repo.storages(), [sid]);
  assert.equal(await repo.nextExpiry(), '2026-01-01T00:00:00.000Z');
  assert.deepEqual(await t.db.async.read((x) => repo.dueIn(x, now)), [{ storage_id: sid, path: 'a.txt', node_id: sib }]);
  assert.equal(await unit((x) => repo.dropIn(x, sib)), true);
  assert.equal(await unit((x) => repo.dropIn(x, sib)), false, 'gone already');
  assert.equal(await repo.nextExpiry(), '2099-01-01T00:00:00.000Z');
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
