import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { JournalRepo } from './journal.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';
import { DEFAULT_TENANT as T1, type TenantScope } from '../db';

let t: TestDb;
let repo: JournalRepo;
let ops = 0;
before(async () => {
  t = await openTestDb();
  repo = new JournalRepo(asyncOnly(t.db));
});
after(() => t?.close());

/** A fresh op row (journal entries reference ops). */
async function op(s: TenantScope = T1): Promise<string> {
  const id = `op${++ops}`;
  const now = new Date().toISOString();
  await t.db.async.sql('INSERT INTO ops (id, tenant_id, kind, status, run_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    id,
    s.tenant_id,
    'copy',
    'running',
    now,
    now,
    now,
  ]);
  return id;
}

test('put replaces a key, size counts per op (a number on both databases), clear forgets only that op', async () => {
  const a = await op();
  const b = await op();
  assert.equal(await repo.get(T1, a, 'k'), undefined);
  await repo.put(T1, a, 'k', '');
  assert.equal(await repo.get(T1, a, 'k'), '', 'an empty value is recorded, not missing');
  await repo.put(T1, a, 'k', 'v2');
  await repo.put(T1, a, 'other', 'x');
  await repo.put(T1, b, 'k', 'b');
  assert.equal(await repo.get(T1, a, 'k'), 'v2');
  assert.strictEqual(await repo.size(T1, a), 2);
  await repo.clear(T1, a);
  assert.strictEqual(await repo.size(T1, a), 0);
  assert.equal(await repo.get(T1, b, 'k'), 'b');
});

test('eight puts of one key at once record it once, with one of their values', async () => {
  const a = await op();
  await Promise.all(Array.from({ length: 8 }, (_, i) => repo.put(T1, a, 'step', `v${i}`)));
  assert.strictEqual(await repo.size(T1, a), 1);
  assert.match((await repo.get(T1, a, 'step'))!, /^v[0-7]$/);
});

test("an op's journal goes with its op", async () => {
  const a = await op();
  await repo.put(T1, a, 'k', 'v');
  await t.db.async.run(t.db.k.deleteFrom('ops').where('tenant_id', '=', 1).where('id', '=', a));
  assert.strictEqual(await repo.size(T1, a), 0);
});

test("two tenants: another tenant's journal is neither read, counted, written over nor cleared", async () => {
  const T2: TenantScope = { tenant_id: 2 };
  const a = await op(T2);
  await repo.put(T2, a, 'step', 'theirs');
  assert.equal(await repo.get(T1, a, 'step'), undefined, 'not read from tenant 1');
  assert.strictEqual(await repo.size(T1, a), 0, 'not counted');
  await repo.clear(T1, a);
  assert.equal(await repo.get(T2, a, 'step'), 'theirs', 'not cleared from tenant 1');
  assert.strictEqual(await repo.size(T2, a), 1);
  await repo.clear(T2, a);
  assert.strictEqual(await repo.size(T2, a), 0);
});
