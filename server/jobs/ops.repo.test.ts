import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OpsRepo, type NewOp } from './ops.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';
import { DEFAULT_TENANT as T1, type TenantScope } from '../db';

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
  tenant_id: 1,
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
  const got = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.claim(T1, o.id, `inst${i}`, lease(), stamp())));
  assert.equal(got.filter(Boolean).length, 1);
  const owner = `inst${got.indexOf(true)}`;
  const other = owner === 'inst0' ? 'inst1' : 'inst0';
  assert.strictEqual((await repo.row(T1, o.id))!.attempts, 1, 'a number on both databases');
  assert.equal(await repo.finish(T1, o.id, other, { status: 'completed' }), false, 'not the holder');
  assert.equal(await repo.giveBack(T1, o.id, owner, null), 1, 'given back, attempt refunded');
  const back = (await repo.row(T1, o.id))!;
  assert.deepEqual([back.status, back.attempts], ['queued', 0]);
  assert.ok(await repo.claim(T1, o.id, owner, null, stamp()));
  assert.ok(await repo.finish(T1, o.id, owner, { status: 'completed', result: { ok: 1 } }));
  const row = (await repo.row(T1, o.id))!;
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
  assert.ok(await repo.claim(T1, first.id, 'inst', lease(), stamp()));
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
    const [c, claimed] = await Promise.all([repo.cancel(T1, o.id), repo.claim(T1, o.id, 'inst', lease(), stamp())]);
    const row = (await repo.row(T1, o.id))!;
    assert.deepEqual([c!.owner_id, c!.visible], [7, true]);
    if (claimed) assert.deepEqual([c!.was, row.status, row.cancel_requested], ['running', 'running', 1]);
    else assert.deepEqual([c!.was, row.status], ['queued', 'cancelled']);
    assert.equal(await repo.cancelRequested(T1, o.id), claimed);
  }
  assert.equal(await repo.cancel(T1, 'op_unknown'), undefined);
});

test('due, depth, lists and the expired lease take-over, with numbers on both databases', async () => {
  const a = op({ dedup_key: 'same', kind: 'test.dedup', owner_id: 3, visible: true, payload: JSON.stringify({ actor: { key_id: 9 } }) });
  assert.ok((await repo.enqueue(a)).inserted);
  assert.equal(await repo.liveByDedup(T1, 'same'), a.id);
  const due = await repo.due(stamp(), ['test.dedup'], false);
  assert.deepEqual(
    due.map((r) => [r.id, r.tenant_id, r.priority]),
    [[a.id, 1, 0]],
  );
  assert.deepEqual(await repo.due(stamp(), ['test.other'], false), []);
  assert.ok((await repo.depth()).some((d) => d.kind === 'test.dedup' && d.status === 'queued' && d.n === 1));
  assert.deepEqual(await repo.ownerOf(T1, a.id), { owner_id: 3, key_id: 9 });
  assert.deepEqual(
    (await repo.listVisible(T1, 3, 10, 9)).map((r) => [r.id, r.owner_id, r.visible]),
    [[a.id, 3, 1]],
  );
  assert.deepEqual(
    (await repo.liveOfKinds(['test.dedup'], 10)).map((r) => r.id),
    [a.id],
  );
  assert.equal(await repo.payloadOf(T1, a.id), a.payload);
  // A lease that passed (PostgreSQL), or none (SQLite: claims carry no lease): either is taken over.
  assert.ok(await repo.claim(T1, a.id, 'gone', t.db.dialect === 'postgres' ? '2000-01-01T00:00:00.000Z' : null, stamp()));
  await repo.progress(T1, a.id, 0.5, 5, 10, 'half');
  assert.deepEqual(await repo.renewLeases('other', soon()), []);
  assert.ok((await repo.requeueExpired()) >= 1, 'a passed lease is taken over');
  const row = (await repo.row(T1, a.id))!;
  assert.deepEqual([row.status, row.bytes_done, row.bytes_total, row.progress], ['queued', 5, 10, 0.5]);
  assert.ok((await repo.busy(soon())) >= 1);
  assert.ok((await repo.nextDue()) !== null);
  assert.ok(await repo.claim(T1, a.id, 'holder', lease(), stamp()));
  assert.deepEqual(await repo.renewLeases('holder', soon()), [{ id: a.id, tenant_id: 1, cancel_requested: 0 }]);
  await repo.retryLater(T1, a.id, 'holder', stamp(), 'internal', {}, 'boom');
  assert.equal((await repo.row(T1, a.id))!.error_text, 'boom');
  assert.ok(await repo.claim(T1, a.id, 'holder', lease(), stamp()));
  assert.ok(await repo.finish(T1, a.id, 'holder', { status: 'failed', code: 'internal', text: 'boom' }));
  assert.ok((await repo.prune(soon())) >= 1);
  assert.equal(await repo.row(T1, a.id), undefined);
});

test("two tenants: the same dedup key, owner and key id in each; another tenant's op is neither found, listed, cancelled, claimed, changed nor finished", async () => {
  const T2: TenantScope = { tenant_id: 2 };
  const payload = JSON.stringify({ actor: { key_id: 4 } });
  const mine = op({ kind: 'test.tenants', dedup_key: 'tenants:same', owner_id: 5, visible: true, payload });
  const theirs = op({ kind: 'test.tenants', dedup_key: 'tenants:same', owner_id: 5, visible: true, payload, tenant_id: 2 });
  assert.ok((await repo.enqueue(mine)).inserted);
  assert.ok((await repo.enqueue(theirs)).inserted, 'the same dedup key in another tenant is another op');
  assert.equal(await repo.liveByDedup(T1, 'tenants:same'), mine.id);
  assert.equal(await repo.liveByDedup(T2, 'tenants:same'), theirs.id);
  for (const [s, own, other] of [
    [T1, mine, theirs],
    [T2, theirs, mine],
  ] as const) {
    assert.equal((await repo.row(s, own.id))!.tenant_id, s.tenant_id);
    assert.equal(await repo.row(s, other.id), undefined, 'not found');
    assert.equal(await repo.ownerOf(s, other.id), undefined);
    assert.equal(await repo.payloadOf(s, other.id), undefined);
    assert.equal(await repo.cancelRequested(s, other.id), false);
    for (const list of [await repo.listVisible(s, null, 50), await repo.listVisible(s, 5, 50), await repo.listVisible(s, 5, 50, 4)])
      assert.deepEqual(
        list.filter((r) => r.kind === 'test.tenants').map((r) => r.id),
        [own.id],
        'listed in its own tenant only',
      );
  }
  // The pump sees both, each with its tenant.
  const due = (await repo.due(stamp(), ['test.tenants'], false)).map((r) => [r.id, r.tenant_id]);
  assert.deepEqual(new Set(due.map(String)), new Set([String([mine.id, 1]), String([theirs.id, 2])]));
  assert.equal(await repo.cancel(T1, theirs.id), undefined, 'not cancelled from tenant 1');
  assert.equal(await repo.claim(T1, theirs.id, 'tenants-inst', lease(), stamp()), false, "not claimed as tenant 1's");
  assert.equal((await repo.row(T2, theirs.id))!.status, 'queued');
  assert.ok(await repo.claim(T2, theirs.id, 'tenants-inst', lease(), stamp()));
  await repo.progress(T1, theirs.id, 0.5, 1, 2, 'nope');
  assert.equal((await repo.row(T2, theirs.id))!.progress, 0, 'no progress written from tenant 1');
  assert.equal(await repo.giveBack(T1, theirs.id, 'tenants-inst', null), 0);
  await repo.retryLater(T1, theirs.id, 'tenants-inst', stamp(), 'internal', {}, 'nope');
  assert.equal(await repo.finish(T1, theirs.id, 'tenants-inst', { status: 'completed' }), false);
  const still = (await repo.row(T2, theirs.id))!;
  assert.deepEqual([still.status, still.error_text], ['running', null], 'unchanged from tenant 1');
  assert.deepEqual(
    (await repo.renewLeases('tenants-inst', soon())).map((r) => [r.id, r.tenant_id]),
    [[theirs.id, 2]],
    "a lease renewal names the op's tenant",
  );
  assert.ok(await repo.finish(T2, theirs.id, 'tenants-inst', { status: 'completed' }));
  assert.ok(await repo.cancel(T1, mine.id));
  assert.equal((await repo.row(T1, mine.id))!.status, 'cancelled');
  assert.equal(await repo.liveInAnyTenant(theirs.id), false);
});
