import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase } from '../db';
import { RequestMeter, StoragesRepo } from '../catalogue';
import { newUid } from '../catalogue/storages.repo';
import { tempDir } from '../../test/helpers/tools';
import { BudgetSpent, TextBudget, TEXT_BUDGET_SHARE, usualCost } from './budget';

const D = Date.parse('2030-03-10T18:00:00Z');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real meter on a real SQLite file with one metered storage; `answer` is a read that the backend answers after `ms`. */
async function setup() {
  const t = tempDir();
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  const repo = new StoragesRepo(db);
  const row = (name: string) => ({
    uid: newUid(),
    name,
    driver: 's3',
    config: '{}',
    mount_path: '/',
    sync_mode: 'poll' as const,
    sync_interval_s: 900,
    enabled: 1,
    read_only: 0,
    rbac_enabled: 0,
    replica_target_id: null,
  });
  const a = row('Metered');
  const b = row('Unbudgeted');
  const id = (await repo.insert(DEFAULT_TENANT, a))!.id;
  const free = (await repo.insert(DEFAULT_TENANT, b))!.id;
  await repo.load();
  const meter = new RequestMeter(db, repo, () => ({}));
  let clock = D;
  meter.now = () => clock;
  const sink = meter.sink(a.uid, 's3')!;
  // As the S3 driver does: the request is counted when its answer comes, before the read resolves.
  const answer = (ms: number) => async () => (await sleep(ms), sink('get'), 'bytes');
  return {
    id,
    free,
    meter,
    sink,
    answer,
    setClock: (ms: number) => (clock = ms),
    close: () => (void db.close(), t.cleanup()),
  };
}

test('extraction stops at its share of the budget; two lanes never take the last request twice', async () => {
  const m = await setup();
  try {
    await m.meter.setBudget(m.id, 10);
    const budget = new TextBudget(m.meter);
    assert.equal(TEXT_BUDGET_SHARE, 0.5);
    for (let i = 0; i < 3; i++) m.sink('list');
    // 3 of the share of 5 used: a text file (1) may start, an office file (3) may not.
    assert.equal(await budget.wait(m.id, usualCost('text')), null);
    const w = await budget.wait(m.id, usualCost('docx'));
    assert.deepEqual(w, { used: 3, limit: 5, budget: 10, until: '2030-03-11', retry_ms: 6 * 3_600_000 });
    m.sink('get');
    // One request left, two reads at once: one goes, the other is refused before anything is sent.
    const read = budget.guard(m.id, m.answer(30));
    const got = await Promise.allSettled([read(), read()]);
    assert.deepEqual(got.map((g) => g.status).sort(), ['fulfilled', 'rejected']);
    const refused = got.find((g) => g.status === 'rejected') as PromiseRejectedResult;
    assert.ok(refused.reason instanceof BudgetSpent);
    assert.equal(await m.meter.usedToday(m.id), 5, 'the share, not one more');
    assert.ok(await budget.wait(m.id, 1));
    // The next UTC day starts afresh.
    m.setClock(D + 6 * 3_600_000 + 1);
    assert.equal(await budget.wait(m.id, 3), null);
    assert.equal(await budget.guard(m.id, m.answer(0))(), 'bytes');
    // A raised budget leaves room at once; a storage with no budget never waits.
    m.setClock(D);
    assert.ok(await budget.wait(m.id, 1));
    await m.meter.setBudget(m.id, 100);
    assert.equal(await budget.wait(m.id, 1), null);
    assert.equal(await budget.wait(m.free, 1_000_000), null);
  } finally {
    m.close();
  }
});
