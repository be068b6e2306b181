import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookDeliveriesRepo } from './webhook-deliveries.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT as T1 } from '../db';

const T2 = { tenant_id: 2 };

let t: TestDb;
let repo: WebhookDeliveriesRepo;
before(async () => {
  t = await openTestDb();
  repo = new WebhookDeliveriesRepo(t.db);
});
after(() => t?.close());

test('deliveries: log newest first, attempts counted, a finished row never reopened, prune keeps pending', async () => {
  const d = (id: string, target_id: string) => ({ id, target_id, url: 'http://127.0.0.1:1/', event: 'file.uploaded', body: '{}' });
  await repo.insert(T1, d('whd_1', 'a'), '2026-12-01T00:00:00.000Z');
  await repo.insert(T1, d('whd_2', 'b'), '2026-12-02T00:00:00.000Z');
  assert.deepEqual(
    (await repo.list(T1)).map((r) => r.id),
    ['whd_2', 'whd_1'],
  );
  assert.deepEqual(
    (await repo.list(T1, { targetId: 'a' })).map((r) => [r.id, r.status, r.attempts]),
    [['whd_1', 'pending', 0]],
  );

  assert.equal(await repo.recordAttempt(T1, 'whd_1', 'pending', 500, 'HTTP 500', '2026-12-01T00:01:00.000Z'), true);
  // Two attempts finishing at once (a retry racing a late answer): one outcome, counted once.
  const both = await Promise.all([
    repo.recordAttempt(T1, 'whd_1', 'delivered', 204, null, '2026-12-01T00:02:00.000Z'),
    repo.recordAttempt(T1, 'whd_1', 'failed', null, 'timed out', '2026-12-01T00:02:00.000Z'),
  ]);
  assert.deepEqual(both.filter(Boolean).length, 1, 'exactly one attempt closes the row');
  const row = (await repo.get(T1, 'whd_1'))!;
  assert.equal(row.attempts, 2);
  assert.ok(row.status === 'delivered' || row.status === 'failed');
  assert.equal(await repo.get(T1, 'whd_9'), undefined);

  assert.equal(await repo.prune(T1, '2026-12-09T00:00:00.000Z'), 1, 'the finished row goes');
  assert.deepEqual(
    (await repo.list(T1)).map((r) => r.id),
    ['whd_2'],
    'a pending row stays',
  );
});

test("another tenant's deliveries are neither found, listed, retried nor pruned", async () => {
  const d = (id: string) => ({ id, target_id: 'same', url: 'http://127.0.0.1:1/', event: 'file.uploaded', body: '{}' });
  await repo.insert(T1, d('whd_t1'), '2026-12-10T00:00:00.000Z');
  await repo.insert(T2, d('whd_t2'), '2026-12-10T00:00:00.000Z');
  await repo.insert(T2, d('whd_t2_done'), '2026-12-10T00:00:00.000Z');
  assert.ok(await repo.recordAttempt(T2, 'whd_t2_done', 'delivered', 204, null, '2026-12-10T00:01:00.000Z'));

  assert.equal(await repo.get(T1, 'whd_t2'), undefined, "tenant 1 does not find tenant 2's delivery");
  assert.equal((await repo.get(T2, 'whd_t2'))?.id, 'whd_t2');
  const listed = async (s: typeof T1, targetId?: string) => (await repo.list(s, { targetId })).map((r) => r.id).filter((id) => id.startsWith('whd_t'));
  assert.deepEqual(await listed(T1, 'same'), ['whd_t1']);
  assert.deepEqual((await listed(T2)).sort(), ['whd_t2', 'whd_t2_done']);

  assert.equal(await repo.recordAttempt(T1, 'whd_t2', 'failed', 500, 'HTTP 500', '2026-12-10T00:02:00.000Z'), false, 'not retried by tenant 1');
  assert.deepEqual([(await repo.get(T2, 'whd_t2'))!.status, (await repo.get(T2, 'whd_t2'))!.attempts], ['pending', 0]);
  assert.equal(await repo.prune(T1, '2026-12-31T00:00:00.000Z'), 0, "tenant 1's prune leaves tenant 2's finished row");
  assert.ok(await repo.get(T2, 'whd_t2_done'));
  assert.equal(await repo.prune(T2, '2026-12-31T00:00:00.000Z'), 1);
  assert.equal(await repo.get(T2, 'whd_t2_done'), undefined);
});
