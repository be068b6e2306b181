import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TextExtractsRepo } from './text-extracts.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: TextExtractsRepo;
let s = 0;
/** Storage `s`, tenant 1's, and tenant 1 as a list (what the drain names). */
const S = () => ({ id: s, tenant_id: 1 });
const ONE = [{ tenant_id: 1 }];
const k = (id: number) => ({ id, tenant_id: 1 });
before(async () => {
  t = await openTestDb();
  repo = new TextExtractsRepo(asyncOnly(t.db));
  s = await testStorage(t.db);
});
after(() => t?.close());

const body = async (id: number) => (await t.db.async.first(t.db.k.selectFrom('search_fts').select('body').where('rowid', '=', id)))?.body;
const setNode = (id: number, size: number, mtime: number) =>
  t.db.async.run(t.db.k.updateTable('nodes').set({ size, mtime }).where('tenant_id', '=', 1).where('id', '=', id));

test('a version is asked for once: the same size and mtime again changes nothing, a new one waits again', async () => {
  const [a, b] = await testNodes(t.db, s, [
    { path: 'a.pdf', size: 10, mtime: 1000 },
    { path: 'b.pdf', size: 20, mtime: 2000 },
  ]);
  assert.deepEqual(
    (
      await repo.markPending(S(), [
        { id: a, size: 10, mtime: 1000 },
        { id: b, size: 20, mtime: 2000 },
      ])
    ).sort(),
    [a, b].sort(),
  );
  assert.deepEqual(await repo.markPending(S(), [{ id: a, size: 10, mtime: 1000 }]), []);
  const waiting = await repo.pendingAfter(ONE, 0, 10);
  assert.deepEqual(
    waiting.map((w) => [w.id, w.path, w.size]),
    [
      [a, 'a.pdf', 10],
      [b, 'b.pdf', 20],
    ],
  );
  assert.deepEqual(
    (await repo.pendingAfter(ONE, a, 10)).map((w) => w.id),
    [b],
  );
  // Done: asking for the same version again is a no-op; a changed one goes back to pending.
  assert.equal(await repo.finish(k(a), { size: 10, mtime: 1000 }, { state: 'done', reason: null, text: 'the wombat text', capped: false }), true);
  assert.deepEqual(await repo.markPending(S(), [{ id: a, size: 10, mtime: 1000 }]), []);
  assert.equal((await repo.byId(k(a), a))?.state, 'done');
  assert.deepEqual(await repo.markPending(S(), [{ id: a, size: 11, mtime: 1000 }]), [a]);
  assert.equal((await repo.byId(k(a), a))?.state, 'pending');
  assert.equal(await body(a), 'the wombat text', 'the older text stays searchable until the new one is in');
});

test('finish stores the text, also for a node the name indexer has not reached, and never over a newer version', async () => {
  const [c] = await testNodes(t.db, s, [{ path: 'docs/c.docx', size: 5, mtime: 50 }]);
  await repo.markPending(S(), [{ id: c, size: 5, mtime: 50 }]);
  // testNodes writes no search_fts row (as the sync leaves them): finish makes it, with the name.
  assert.equal(await repo.finish(k(c), { size: 5, mtime: 50 }, { state: 'done', reason: 'cut', text: 'numbat', capped: true }), true);
  assert.equal(await body(c), 'numbat');
  const row = await repo.byId(k(c), c);
  assert.deepEqual([row?.state, row?.chars, row?.capped, row?.reason], ['done', 6, 1, 'cut']);
  // A write during the extraction: the node changed, the outcome of the older read is dropped.
  await setNode(c, 6, 60);
  await repo.markPending(S(), [{ id: c, size: 6, mtime: 60 }]);
  assert.equal(await repo.finish(k(c), { size: 5, mtime: 50 }, { state: 'done', reason: null, text: 'stale', capped: false }), false);
  assert.equal(await body(c), 'numbat');
  assert.equal((await repo.byId(k(c), c))?.state, 'pending');
  // A failure clears the text of the older version.
  assert.equal(await repo.finish(k(c), { size: 6, mtime: 60 }, { state: 'failed', reason: 'pdftotext failed: broken', text: null, capped: false }), true);
  assert.equal(await body(c), null);
  assert.deepEqual([(await repo.byId(k(c), c))?.state, (await repo.byId(k(c), c))?.reason], ['failed', 'pdftotext failed: broken']);
  const counts = await repo.counts(ONE);
  assert.ok(counts.failed === 1 && counts.pending === 2, JSON.stringify(counts));
});

test('rows go with their node; drop forgets a waiting row', async () => {
  const [d, e] = await testNodes(t.db, s, [
    { path: 'd.txt', size: 1, mtime: 1 },
    { path: 'e.txt', size: 1, mtime: 1 },
  ]);
  await repo.markPending(S(), [
    { id: d, size: 1, mtime: 1 },
    { id: e, size: 1, mtime: 1 },
  ]);
  await t.db.async.run(t.db.k.deleteFrom('nodes').where('tenant_id', '=', 1).where('id', '=', d));
  assert.equal(await repo.byId(k(d), d), undefined);
  await repo.drop(k(e));
  assert.equal(await repo.byId(k(e), e), undefined);
});

test('windows: the body around the first hit in any letter case, only the window, the start when there is no hit', async () => {
  const [f, g, h] = await testNodes(t.db, s, [
    { path: 'f.txt', size: 1, mtime: 1 },
    { path: 'g.txt', size: 1, mtime: 1 },
    { path: 'h.txt', size: 1, mtime: 1 },
  ]);
  const long = `${'x'.repeat(5000)} the Quokka lives here ${'y'.repeat(5000)}`;
  for (const [id, text] of [
    [f, long],
    [g, 'Quokka at the start'],
    [h, 'nothing to see'],
  ] as const) {
    await repo.markPending(S(), [{ id, size: 1, mtime: 1 }]);
    await repo.finish(k(id), { size: 1, mtime: 1 }, { state: 'done', reason: null, text, capped: false });
  }
  const w = await repo.windows([f, g, h], 'quokka', 20, 60);
  assert.deepEqual(w.get(f), { in: 'body', text: long.slice(long.indexOf('Quokka') - 20, long.indexOf('Quokka') + 40) });
  assert.deepEqual(w.get(g), { in: 'body', text: 'Quokka at the start' });
  assert.deepEqual(w.get(h), { in: 'body', text: 'nothing to see' });
});

test('metadata: stored beside the body with the date taken, its window when the body lacks the term; a failure clears both', async () => {
  const [p, q] = await testNodes(t.db, s, [
    { path: 'p.jpg', size: 1, mtime: 1 },
    { path: 'q.jpg', size: 1, mtime: 1 },
  ]);
  for (const id of [p, q]) await repo.markPending(S(), [{ id, size: 1, mtime: 1 }]);
  await repo.finish(k(p), { size: 1, mtime: 1 }, { state: 'done', reason: null, text: '', capped: false, meta: 'Canon\nIstanbul', taken: 1559398920000 });
  await repo.finish(k(q), { size: 1, mtime: 1 }, { state: 'done', reason: null, text: 'a sign reading Istanbul', capped: false, meta: 'Istanbul' });
  const w = await repo.windows([p, q], 'istanbul', 20, 60);
  assert.deepEqual(w.get(p), { in: 'meta', text: 'Canon\nIstanbul' });
  assert.deepEqual(w.get(q), { in: 'body', text: 'a sign reading Istanbul' }, 'the body first');
  assert.equal((await repo.byId(k(p), p))?.taken, 1559398920000);
  await setNode(p, 2, 2);
  await repo.markPending(S(), [{ id: p, size: 2, mtime: 2 }]);
  await repo.finish(k(p), { size: 2, mtime: 2 }, { state: 'failed', reason: 'broken', text: null, capped: false });
  const row = await t.db.async.first(t.db.k.selectFrom('search_fts').select(['body', 'meta']).where('rowid', '=', p));
  assert.deepEqual(row, { body: null, meta: null });
  assert.equal((await repo.byId(k(p), p))?.taken, null);
});

test('a file whose node was deleted before it was asked for is left out, quietly', async () => {
  const [live, gone] = await testNodes(t.db, s, [
    { path: 'live.docx', size: 5, mtime: 5000 },
    { path: 'gone.docx', size: 6, mtime: 6000 },
  ]);
  await t.db.async.run(t.db.k.deleteFrom('nodes').where('tenant_id', '=', 1).where('id', '=', gone));
  assert.deepEqual(
    await repo.markPending(S(), [
      { id: live, size: 5, mtime: 5000 },
      { id: gone, size: 6, mtime: 6000 },
    ]),
    [live],
  );
  assert.equal(await repo.byId(k(gone), gone), undefined);
});

test('paging leaves out the storages waiting on their request budget', async () => {
  const other = await testStorage(t.db, 'Metered');
  const [m1, m2] = await testNodes(t.db, other, [
    { path: 'm1.txt', size: 1, mtime: 1 },
    { path: 'm2.txt', size: 1, mtime: 1 },
  ]);
  const [f] = await testNodes(t.db, s, [{ path: 'own.txt', size: 1, mtime: 1 }]);
  await repo.markPending(
    S(),
    [m1, m2, f].map((id) => ({ id, size: 1, mtime: 1 })),
  );
  const ids = async (except?: number[]) => (await repo.pendingAfter(ONE, m1 - 1, 10, except)).map((w) => w.id);
  assert.deepEqual(await ids(), [m1, m2, f]);
  assert.deepEqual(await ids([other]), [f]);
  assert.deepEqual(await ids([other, s]), []);
  assert.deepEqual(await ids([s]), [m1, m2]);
});

test('tenants: another tenant’s extracts are neither asked for, listed, found, finished, dropped, counted nor reported', async () => {
  const s2 = { id: await testStorage(t.db, 'Files', { tenant_id: 2 }), tenant_id: 2 };
  const TWO = [{ tenant_id: 2 }];
  const [mine] = await testNodes(t.db, S(), [{ path: 'same/paper.pdf', size: 3, mtime: 3 }]);
  const [theirs] = await testNodes(t.db, s2, [{ path: 'same/paper.pdf', size: 3, mtime: 3 }]);
  const before = await repo.counts(ONE);
  // Tenant 1 naming tenant 2's node: nothing to extract there.
  assert.deepEqual(await repo.markPending(S(), [{ id: theirs, size: 3, mtime: 3 }]), []);
  assert.deepEqual(await repo.markPending(s2, [{ id: theirs, size: 3, mtime: 3 }]), [theirs]);
  assert.deepEqual(await repo.markPending(S(), [{ id: mine, size: 3, mtime: 3 }]), [mine]);
  assert.equal(await repo.byId(k(theirs), theirs), undefined, 'not found in tenant 1');
  assert.equal((await repo.byId(s2, theirs))?.tenant_id, 2, 'the row carries its storage’s tenant');
  assert.ok(!(await repo.pendingAfter(ONE, 0, 1000)).some((w) => w.id === theirs), 'not listed to tenant 1');
  assert.deepEqual(
    (await repo.pendingAfter(TWO, 0, 1000)).map((w) => [w.id, w.tenant_id]),
    [[theirs, 2]],
  );
  assert.equal((await repo.counts(ONE)).pending, before.pending + 1, 'only tenant 1’s new row counted');
  assert.equal(await repo.finish(k(theirs), { size: 3, mtime: 3 }, { state: 'done', reason: null, text: 'x', capped: false }), false);
  await repo.drop(k(theirs));
  assert.equal((await repo.byId(s2, theirs))?.state, 'pending', 'neither finished nor dropped by tenant 1');
  assert.equal(await repo.markScansPending(S(), ['pdf'], 10), 0, 'nothing of tenant 2 waits again for tenant 1’s OCR');
  assert.ok(!(await repo.byStorage(ONE, 5)).some((x) => x.storage_id === s2.id), 'tenant 2’s storage is not in tenant 1’s status');
  assert.deepEqual(
    (await repo.byStorage(TWO, 5)).map((x) => [x.storage_id, x.pending]),
    [[s2.id, 1]],
  );
});
