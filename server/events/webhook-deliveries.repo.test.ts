import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookDeliveriesRepo } from './webhook-deliveries.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: WebhookDeliveriesRepo;
before(async () => {
  t = await openTestDb();
  repo = new WebhookDeliveriesRepo(t.db);
});
after(() => t?.close());

test('deliveries: log newest first, attempts counted, a finished row never reopened, prune keeps pending', async () => {
  const d = (id: string, target_id: string) => ({ id, target_id, url: 'http://127.0.0.1:1/', event: 'file.uploaded', body: '{}' });
  await repo.insert(d('whd_1', 'a'), '2026-12-01T00:00:00.000Z');
  await repo.insert(d('whd_2', 'b'), '2026-12-02T00:00:00.000Z');
  assert.deepEqual(
    (await repo.list()).map((r) => r.id),
    ['whd_2', 'whd_1'],
  );
  assert.deepEqual(
    (await repo.list({ targetId: 'a' })).map((r) => [r.id, r.status, r.attempts]),
    [['whd_1', 'pending', 0]],
  );

  assert.equal(await repo.recordAttempt('whd_1', 'pending', 500, 'HTTP 500', '2026-12-01T00:01:00.000Z'), true);
  // Two attempts finishing at once (a retry racing a late answer): one outcome, counted once.
  const both = await Promise.all([
    repo.recordAttempt('whd_1', 'delivered', 204, null, '2026-12-01T00:02:00.000Z'),
    repo.recordAttempt('whd_1', 'failed', null, 'timed out', '2026-12-01T00:02:00.000Z'),
  ]);
  assert.deepEqual(both.filter(Boolean).length, 1, 'exactly one attempt closes the row');
  const row = (await repo.get('whd_1'))!;
  assert.equal(row.attempts, 2);
  assert.ok(row.status === 'delivered' || row.status === 'failed');
  assert.equal(await repo.get('whd_9'), undefined);

  assert.equal(await repo.prune('2026-12-09T00:00:00.000Z'), 1, 'the finished row goes');
  assert.deepEqual(
    (await repo.list()).map((r) => r.id),
    ['whd_2'],
    'a pending row stays',
  );
});
