import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AuditRepo, type AuditRow } from './audit.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT as T1, type TenantScope } from '../db';

let t: TestDb;
let repo: AuditRepo;
before(async () => {
  t = await openTestDb();
  repo = new AuditRepo(t.db);
});
after(() => t?.close());

const row = (action: string, ts: string, user_id: number | null = null): AuditRow => ({
  ts,
  user_id,
  user_email: null,
  action,
  resource: null,
  ip: '127.0.0.1',
  ua: null,
  meta: { n: action },
});

test('audit rows read back newest first, filtered by user, action prefix and time', async () => {
  await repo.insert(T1, row('api_key.created', '2026-12-01T00:00:00.000Z', 1));
  await repo.insert(T1, row('api_keyXcreated', '2026-12-02T00:00:00.000Z', 1));
  await repo.insert(T1, row('api_key.revoked', '2026-12-03T00:00:00.000Z', 2));
  await repo.insert(T1, row('login', '2026-12-04T00:00:00.000Z', 1));

  assert.deepEqual(
    (await repo.query(T1, {})).map((r) => r.action),
    ['login', 'api_key.revoked', 'api_keyXcreated', 'api_key.created'],
  );
  // `_` is no wildcard: `api_keyXcreated` is not under `api_key.`.
  assert.deepEqual(
    (await repo.query(T1, { action: 'api_key.*' })).map((r) => r.action),
    ['api_key.revoked', 'api_key.created'],
  );
  assert.deepEqual(
    (await repo.query(T1, { action: 'login' })).map((r) => r.ts),
    ['2026-12-04T00:00:00.000Z'],
  );
  assert.deepEqual(
    (await repo.query(T1, { user_id: 2 })).map((r) => r.action),
    ['api_key.revoked'],
  );
  assert.deepEqual((await repo.query(T1, { from: '2026-12-02T00:00:00.000Z', to: '2026-12-03T00:00:00.000Z' })).length, 2);
  assert.deepEqual((await repo.query(T1, { limit: 1, offset: 1 }))[0].meta, { n: 'api_key.revoked' }, 'meta comes back as an object');
});

test("two tenants, the same user id and action: another tenant's rows are neither listed nor counted by any filter", async () => {
  const T2: TenantScope = { tenant_id: 2 };
  const mine = (await repo.query(T1, { user_id: 7 })).length;
  await repo.insert(T2, row('share.created', '2026-12-05T00:00:00.000Z', 7));
  await repo.insert(T2, row('share.revoked', '2026-12-06T00:00:00.000Z', 7));
  assert.deepEqual(
    (await repo.query(T2, {})).map((r) => r.action),
    ['share.revoked', 'share.created'],
    'tenant 2 reads its own rows only',
  );
  assert.equal((await repo.query(T1, { user_id: 7 })).length, mine, 'not by user');
  assert.deepEqual(await repo.query(T1, { action: 'share.*' }), [], 'not by action');
  assert.ok(!(await repo.query(T1, { from: '2026-12-05T00:00:00.000Z' })).some((r) => r.action.startsWith('share.')), 'not by time');
});
