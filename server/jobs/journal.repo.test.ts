import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { JournalRepo } from './journal.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: JournalRepo;
let ops = 0;
before(async () => {
  t = await openTestDb();
  repo = new JournalRepo(t.db);
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
  assert.equal(repo.get(a, 'k'), undefined);
  repo.put(a, 'k', '');
  assert.equal(repo.get(a, 'k'), '', 'an empty value is recorded, not missing');
  repo.put(a, 'k', 'v2');
  repo.put(a, 'other', 'x');
  repo.put(b, 'k', 'b');
  assert.equal(repo.get(a, 'k'), 'v2');
  assert.strictEqual(repo.size(a), 2);
  repo.clear(a);
  assert.strictEqual(repo.size(a), 0);
  assert.equal(repo.get(b, 'k'), 'b');
});

test("an op's journal goes with its op", async () => {
  const a = await op();
  repo.put(a, 'k', 'v');
  await t.db.async.run(t.db.k.deleteFrom('ops').where('id', '=', a));
  assert.strictEqual(repo.size(a), 0);
});
