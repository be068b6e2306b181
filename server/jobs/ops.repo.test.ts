import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OpsRepo, type NewOp } from './ops.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: OpsRepo;
let n = 0;
before(async () => {
  t = await openTestDb();
  repo = new OpsRepo(asyncOnly(t.db));
});
after(() => t?.close());

const op = (o: Partial<NewOp> = {}): NewOp => ({
  id: `op_${++n}`,
  kind: 'test.kind',
  priority: 0,
  payload: '{}',
  owner_id: null,
  visible: false,
  dedup_key: null,
  max_attempts: 3,
  run_at: '2000-01-01T00:00:00.000Z',
  ...o,
});
const soon = () => new Date(Date.now() + 60_000).toISOString();
const lease = () => (t.db.dialect === 'postgres' ? soon() : null);
const stamp = () => new Date().toISOString();
const live = async (key: string) =>
  (await t.db.async.sql<{ id: string }>("SELECT id FROM ops WHERE dedup_key = ? AND status IN ('queued','running')", [key])).map((r) => r.id);

test('ten claims of one queued op: one wins; only the holder of the lease records its outcome', async () => {
  const o = op();
  assert.deepEqual(await repo.enqueue(o), { id: o.id, inserted: true });
  const got = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.claim(o.id, `inst${i}`, lease(), stamp())));
  assert.equal(got.filter(Boolean).length, 1);
  const owner = `inst${got.indexOf(true)}`;
  const other = owner === 'inst0' ? 'inst1' : 'inst0';
  assert.strictEqual((await repo.row(o.id))!.attempts, 1, 'a number on both databases');
  assert.equal(await repo.finish(o.id, other, { status: 'completed' }), false, 'not the holder');
  assert.equal(await repo.giveBack(o.id, owner, null), 1, 'given back, attempt refunded');
  const back = (await repo.row(o.id))!;
  assert.deepEqual([back.status, back.attempts], ['queued', 0]);
  assert.ok(await repo.claim(o.id, owner, null, stamp()));
  assert.ok(await repo.finish(o.id, owner, { status: 'completed', result: { ok: 1 } }));
  const row = (await repo.row(o.id))!;
  assert.deepEqual([row.status, row.progress, JSON.parse(row.result!)], ['completed', 1, { ok: 1 }]);
});

test('twenty enqueues of one dedup key at once: one op, and every caller gets its id', async () => {
  const made = await Promise.all(Array.from({ length: 20 }, () => repo.enqueue(op({ dedup_key: 'race', kind: 'test.race' }))));
  const ids = new Set(made.map((m) => m.id));
  assert.equal(ids.size, 1, 'all callers got one id');
  assert.equal(made.filter((m) => m.inserted).length, 1, 'one inserted it');
  assert.deepEqual(await live('race'), [...ids]);
});

test('behind a running op: twelve enqueues at once make one `#next` op; a queued op absorbs them', async () => {
  const first = await repo.enqueue(op({ dedup_key: 'copy:a', kind: 'test.copy' }), true);
  assert.equal((await repo.enqueue(op({ dedup_key: 'copy:a', kind: 'test.copy' }), true)).id, first.id, 'queued: absorbed');
  assert.ok(await repo.claim(first.id, 'inst', lease(), stamp()));
  assert.equal((await repo.enqueue(op({ dedup_key: 'copy:a' }))).id, first.id, 'without behindRunning the running op absorbs');
  const made = await Promise.all(Array.from({ length: 12 }, () => repo.enqueue(op({ dedup_key: 'copy:a', kind: 'test.copy' }), true)));
  const ids = new Set(made.map((m) => m.id));
  assert.equal(ids.size, 1);
  assert.notEqual([...ids][0], first.id, 'a running op does not absorb them');
  assert.deepEqual(await live('copy:a#next'), [...ids]);
  // A tick's batch in one unit: the same rules per item.
  const batch = await repo.enqueueAll([
    { op: op({ dedup_key: 'copy:a', kind: 'test.copy' }), behindRunning: true },
    { op: op({ dedup_key: 'copy:b', kind: 'test.copy' }), behindRunning: true },
    { op: op({ dedup_key: 'copy:b', kind: 'test.copy' }), behindRunning: true },
  ]);
  assert.equal(batch[0]!.id, [...ids][0]);
  assert.equal(batch[1]!.id, batch[2]!.id);
  assert.deepEqual(
    batch.map((b) => b.inserted),
    [false, true, false],
  );
});

test('a cancel racing a claim: the op ends cancelled, or running with its cancel flag, never running unflagged', async () => {
  for (let i = 0; i < 6; i++) {
    const o = op({ kind: 'test.cancel', visible: true, owner_id: 7 });
    await repo.enqueue(o);
    const [c, claimed] = await Promise.all([repo.cancel(o.id), repo.claim(o.id, 'inst', lease(), stamp())]);
    const row = (await repo.row(o.id))!;
    assert.deepEqual([c!.owner_id, c!.visible], [7, true]);
    if (claimed) assert.deepEqual([c!.was, row.status, row.cancel_requested], ['running', 'running', 1]);
    else assert.deepEqual([c!.was, row.status], ['queued', 'cancelled']);
    assert.equal(await repo.cancelRequested(o.id), claimed);
  }
  assert.equal(await repo.cancel('op_unknown'), undefined);
});

test('due, depth, lists and the expired lease take-over, with numbers on both databases', async () => {
  const a = op({ dedup_key: 'same', kind: 'test.dedup', owner_id: 3, visible: true, payload: JSON.stringify({ actor: { key_id: 9 } }) });
  assert.ok((await repo.enqueue(a)).inserted);
  assert.equal(await repo.liveByDedup('same'), a.id);
  const due = await repo.due(stamp(), ['test.dedup'], false);
  assert.deepEqual(
    due.map((r) => [r.id, r.priority]),
    [[a.id, 0]],
  );
  assert.deepEqual(await repo.due(stamp(), ['test.other'], false), []);
  assert.ok((await repo.depth()).some((d) => d.kind === 'test.dedup' && d.status === 'queued' && d.n === 1));
  assert.deepEqual(await repo.ownerOf(a.id), { owner_id: 3, key_id: 9 });
  assert.deepEqual(
    (await repo.listVisible(3, 10, 9)).map((r) => [r.id, r.owner_id, r.visible]),
    [[a.id, 3, 1]],
  );
  assert.deepEqual(
    (await repo.liveOfKinds(['test.dedup'], 10)).map((r) => r.id),
    [a.id],
  );
  assert.equal(await repo.payloadOf(a.id), a.payload);
  // A lease that passed (PostgreSQL), or none (SQLite: claims carry no lease): either is taken over.
  assert.ok(await repo.claim(a.id, 'gone', t.db.dialect === 'postgres' ? '2000-01-01T00:00:00.000Z' : null, stamp()));
  await repo.progress(a.id, 0.5, 5, 10, 'half');
  assert.deepEqual(await repo.renewLeases('other', soon()), []);
  assert.ok((await repo.requeueExpired()) >= 1, 'a passed lease is taken over');
  const row = (await repo.row(a.id))!;
  assert.deepEqual([row.status, row.bytes_done, row.bytes_total, row.progress], ['queued', 5, 10, 0.5]);
  assert.ok((await repo.busy(soon())) >= 1);
  assert.ok((await repo.nextDue()) !== null);
  assert.ok(await repo.claim(a.id, 'holder', lease(), stamp()));
  assert.deepEqual(await repo.renewLeases('holder', soon()), [{ id: a.id, cancel_requested: 0 }]);
  await repo.retryLater(a.id, 'holder', stamp(), 'internal', {}, 'boom');
  assert.equal((await repo.row(a.id))!.error_text, 'boom');
  assert.ok(await repo.claim(a.id, 'holder', lease(), stamp()));
  assert.ok(await repo.finish(a.id, 'holder', { status: 'failed', code: 'internal', text: 'boom' }));
  assert.ok((await repo.prune(soon())) >= 1);
  assert.equal(await repo.row(a.id), undefined);
});
