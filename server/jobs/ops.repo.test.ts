import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OpsRepo, type NewOp } from './ops.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: OpsRepo;
let n = 0;
before(async () => {
  t = await openTestDb();
  repo = new OpsRepo(t.db);
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

test('ten claims of one queued op: one wins; only the holder of the lease records its outcome', async () => {
  const o = op();
  assert.ok(repo.insert(o));
  const got = await Promise.all(
    Array.from({ length: 10 }, (_, i) => repo.claim(o.id, `inst${i}`, t.db.dialect === 'postgres' ? soon() : null, new Date().toISOString())),
  );
  assert.equal(got.filter(Boolean).length, 1);
  const owner = `inst${got.indexOf(true)}`;
  const other = owner === 'inst0' ? 'inst1' : 'inst0';
  assert.equal(repo.row(o.id)!.attempts, 1);
  assert.equal(repo.finish(o.id, other, { status: 'completed' }), false, 'not the holder');
  assert.equal(repo.giveBack(o.id, owner, null), 1, 'given back, attempt refunded');
  assert.deepEqual([repo.row(o.id)!.status, repo.row(o.id)!.attempts], ['queued', 0]);
  assert.ok(await repo.claim(o.id, owner, null, new Date().toISOString()));
  assert.ok(repo.finish(o.id, owner, { status: 'completed', result: { ok: 1 } }));
  const row = repo.row(o.id)!;
  assert.deepEqual([row.status, row.progress, JSON.parse(row.result!)], ['completed', 1, { ok: 1 }]);
});

test('a live dedup key keeps its one op; due, depth and the expired lease take-over', async () => {
  const a = op({ dedup_key: 'same', kind: 'test.dedup' });
  assert.ok(repo.insert(a));
  assert.equal(repo.insert(op({ dedup_key: 'same', kind: 'test.dedup' })), false, 'the unique index decides');
  assert.equal(repo.liveByDedup('same'), a.id);
  const due = await repo.due(new Date().toISOString(), ['test.dedup'], false);
  assert.deepEqual(
    due.map((r) => r.id),
    [a.id],
  );
  assert.deepEqual(await repo.due(new Date().toISOString(), ['test.other'], false), []);
  assert.ok(repo.depth().some((d) => d.kind === 'test.dedup' && d.status === 'queued' && Number(d.n) === 1));
  // A lease that passed (PostgreSQL), or none (SQLite: claims carry no lease): either is taken over.
  assert.ok(await repo.claim(a.id, 'gone', t.db.dialect === 'postgres' ? '2000-01-01T00:00:00.000Z' : null, new Date().toISOString()));
  assert.equal(repo.renewLeases('other', soon()).length, 0);
  assert.ok(repo.requeueExpired() >= 1, 'a passed lease is taken over');
  assert.equal(repo.row(a.id)!.status, 'queued');
  assert.ok(repo.busy(soon()) >= 1);
  assert.ok((await repo.nextDue()) !== null);
});
