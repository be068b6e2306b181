import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { JournalRepo } from './journal.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: JournalRepo;
let ops = 0;
before(async () => {
  t = await openTestDb();
  repo = new JournalRepo(asyncOnly(t.db));
});
after(() => t?.close());

/** A fresh op row (journal entries reference ops). */
async function op(): Promise<string> {
  const id = `op${++ops}`;
  const now = new Date().toISOString();
  await t.db.async.sql('INSERT INTO ops (id, kind, status, run_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [id, 'copy', 'running', now, now, now]);
  return id;
}

test('put replaces a key, size counts per op (a number on both databases), clear forgets only that op', async () => {
  const a = await op();
  const b = await op();
  assert.equal(await repo.get(a, 'k'), undefined);
  await repo.put(a, 'k', '');
  assert.equal(await repo.get(a, 'k'), '', 'an empty value is recorded, not missing');
  await repo.put(a, 'k', 'v2');
  await repo.put(a, 'other', 'x');
  await repo.put(b, 'k', 'b');
  assert.equal(await repo.get(a, 'k'), 'v2');
  assert.strictEqual(await repo.size(a), 2);
  await repo.clear(a);
  assert.strictEqual(await repo.size(a), 0);
  assert.equal(await repo.get(b, 'k'), 'b');
});

test('eight puts of one key at once record it once, with one of their values', async () => {
  const a = await op();
  await Promise.all(Array.from({ length: 8 }, (_, i) => repo.put(a, 'step', `v${i}`)));
  assert.strictEqual(await repo.size(a), 1);
  assert.match((await repo.get(a, 'step'))!, /^v[0-7]$/);
});

test("an op's journal goes with its op", async () => {
  const a = await op();
  await repo.put(a, 'k', 'v');
  await t.db.async.run(t.db.k.deleteFrom('ops').where('id', '=', a));
  assert.strictEqual(await repo.size(a), 0);
});
