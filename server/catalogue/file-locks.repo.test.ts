import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../events';
import { FileLocksRepo, type LockRow } from './file-locks.repo';
import { FileLocks } from './file-locks';
import { NodesRepo } from './nodes.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';

let t: TestDb;
let repo: FileLocksRepo;
before(async () => {
  t = await openTestDb();
  repo = new FileLocksRepo(t.db);
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
  assert.deepEqual(repo.storages(), []);
  assert.equal(repo.nextExpiry(), null);
  repo.put(ab, lock('sign'));
  repo.put(ab, lock('ocr'));
  repo.put(sib, lock('old', '2026-01-01T00:00:00.000Z'));
  repo.put(a, lock('later', '2099-01-01T00:00:00.000Z'));
  assert.equal(repo.at(sid, 'a/b.pdf')?.plugin, 'ocr', 'the second lock replaced the first');
  assert.equal(repo.at(sid, 'a.txt')?.plugin, 'old', 'expired ones too (the rules decide)');
  assert.equal(repo.at(sid, 'nowhere'), undefined);
  const now = '2026-12-05T00:00:00.000Z';
  assert.deepEqual(
    repo
      .below(sid, 'a', now)
      .map((r) => r.path)
      .sort(),
    ['a', 'a/b.pdf'],
    'not the sibling sharing the name prefix',
  );
  assert.deepEqual(
    repo
      .below(sid, '', now)
      .map((r) => r.path)
      .sort(),
    ['a', 'a/b.pdf'],
    'the expired one is left out',
  );
  assert.deepEqual(repo.storages(), [sid]);
  assert.equal(repo.nextExpiry(), '2026-01-01T00:00:00.000Z');
  assert.deepEqual(repo.due(now), [{ storage_id: sid, path: 'a.txt', node_id: sib }]);
  assert.equal(repo.drop(sib), true);
  assert.equal(repo.drop(sib), false, 'gone already');
  assert.equal(repo.nextExpiry(), '2099-01-01T00:00:00.000Z');
});

test('two apps locking one file at once: exactly one holds it, the other is refused', async () => {
  const sid = await testStorage(t.db, 'Race');
  await testNodes(t.db, sid, [{ path: 'contract.pdf' }]);
  const locks = new FileLocks(
    t.db,
    new NodesRepo(t.db),
    new EventBus(t.db),
    () => 'Race',
    () => {},
  );
  locks.start();
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
