import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OutboxRepo } from './outbox.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT as T1 } from '../db';

const T2 = { tenant_id: 2 };

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(() => t?.close());

test('pending rows in order; of two instances marking one row, exactly one wins; prune keeps the unpublished', async () => {
  // Two repositories on one database stand for two instances' buses.
  const [a, b] = [new OutboxRepo(t.db), new OutboxRepo(t.db)];
  await a.insertOne(T1, 'file.uploaded', '{"n":1}', '2026-12-01T00:00:00.000Z');
  await b.insertOne(T1, 'file.deleted', '{"n":2}', '2026-12-01T00:00:01.000Z');
  await a.insertOne(T1, 'file.updated', '{"n":3}', '2026-12-01T00:00:02.000Z');
  const rows = await a.pending();
  assert.deepEqual(
    rows.map((r) => [r.event, r.payload]),
    [
      ['file.uploaded', '{"n":1}'],
      ['file.deleted', '{"n":2}'],
      ['file.updated', '{"n":3}'],
    ],
  );
  // Both instances race for every row at once.
  const wins = await Promise.all(
    rows.map((r) => Promise.all([a.markPublished(r, '2026-12-02T00:00:00.000Z'), b.markPublished(r, '2026-12-02T00:00:00.000Z')])),
  );
  assert.deepEqual(
    wins.map(([x, y]) => Number(x) + Number(y)),
    [1, 1, 1],
    'a row is published once, by either',
  );
  await b.insertOne(T1, 'late', '{}', '2026-12-03T00:00:00.000Z');
  assert.deepEqual(
    (await b.pending()).map((r) => r.event),
    ['late'],
  );
  assert.equal(await a.prune('2026-12-03T00:00:00.000Z'), 3, 'the published rows go');
  assert.equal(await a.prune('2026-12-09T00:00:00.000Z'), 0, 'an unpublished row is never pruned');
  assert.deepEqual(
    (await a.pending()).map((r) => r.event),
    ['late'],
  );
});

test('a batch is recorded whole or not at all', async () => {
  const repo = new OutboxRepo(t.db);
  const before = (await repo.pending()).length;
  await repo.insertAll(T1, 'folder.changed', ['{"folder":"a"}', '{"folder":"b"}'], '2026-12-04T00:00:00.000Z');
  assert.deepEqual(
    (await repo.pending()).slice(before).map((r) => r.payload),
    ['{"folder":"a"}', '{"folder":"b"}'],
  );
  // A row the table refuses (NOT NULL payload) undoes the rows before it in the batch.
  await assert.rejects(repo.insertAll(T1, 'folder.changed', ['{"folder":"c"}', null as unknown as string], '2026-12-04T00:00:01.000Z'));
  assert.equal((await repo.pending()).length, before + 2);
});

test("a row recorded in a unit of work commits with the unit's other statements, or not at all", async () => {
  const repo = new OutboxRepo(t.db);
  const before = (await repo.pending()).length;
  await t.db.async.unit(function* (x) {
    yield* repo.insertIn(x, T1, 'audit', '{"kept":true}', '2026-12-05T00:00:00.000Z');
  });
  await assert.rejects(
    t.db.async.unit(function* (x) {
      yield* repo.insertIn(x, T1, 'audit', '{"kept":false}', '2026-12-05T00:00:01.000Z');
      throw new Error('the change it describes failed');
    }),
    /the change it describes failed/,
  );
  assert.deepEqual(
    (await repo.pending()).slice(before).map((r) => r.payload),
    ['{"kept":true}'],
  );
});

test("a row keeps its change's tenant; the drain reads every tenant's, marks each only in its own, prunes every tenant's", async () => {
  const repo = new OutboxRepo(t.db);
  for (const r of await repo.pending()) await repo.markPublished(r, '2026-12-06T00:00:00.000Z');
  await repo.insertOne(T1, 'audit', '{"t":1}', '2026-12-06T00:00:01.000Z');
  await repo.insertAll(T2, 'folder.changed', ['{"t":2}'], '2026-12-06T00:00:02.000Z');
  await t.db.async.unit(function* (x) {
    yield* repo.insertIn(x, T2, 'audit', '{"t":"2b"}', '2026-12-06T00:00:03.000Z');
  });
  const rows = await repo.pending();
  assert.deepEqual(
    rows.map((r) => [r.tenant_id, r.payload]),
    [
      [1, '{"t":1}'],
      [2, '{"t":2}'],
      [2, '{"t":"2b"}'],
    ],
  );
  // A mark naming another tenant does not touch the row.
  assert.equal(await repo.markPublished({ id: rows[1].id, tenant_id: 1 }, '2026-12-06T00:01:00.000Z'), false);
  assert.equal((await repo.pending()).length, 3);
  for (const r of rows) assert.equal(await repo.markPublished(r, '2026-12-06T00:01:00.000Z'), true);
  assert.equal(await repo.prune('2026-12-07T00:00:00.000Z'), 3 + 4, "every tenant's published rows go");
});
