import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SyncRunsRepo } from './sync-runs.repo';
import { StoragesRepo } from './storages.repo';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { StorageRef } from './storage-ref';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: SyncRunsRepo;
let n = 0;
before(async () => {
  t = await openTestDb();
  repo = new SyncRunsRepo(asyncOnly(t.db)); // every statement on db.async
});
after(() => t?.close());

const T2: TenantScope = { tenant_id: 2 };
/** A run of tenant 1 (the tests before tenants' own). */
const r1 = (id: number) => ({ id, ...DEFAULT_TENANT });

const storage = async (tenant: TenantScope = DEFAULT_TENANT): Promise<StorageRef> => ({
  ...tenant,
  id: (await new StoragesRepo(t.db).insert(tenant, {
    uid: `u${++n}`,
    name: `S${n}`,
    driver: 'local',
    config: '{}',
    mount_path: '/',
    sync_mode: 'poll',
    sync_interval_s: 900,
    enabled: 1,
    read_only: 0,
    rbac_enabled: 0,
    replica_target_id: null,
  }))!.id,
});

test('ten callers queueing at once share one live run; a finished run makes room for the next', async () => {
  const s = await storage();
  const got = await Promise.all(Array.from({ length: 10 }, () => repo.queue(s)));
  assert.equal(new Set(got.map((g) => g.id)).size, 1, 'one run');
  assert.equal(got.filter((g) => g.made).length, 1, 'made once');
  const id = got[0].id;
  assert.equal(await repo.active(s), id);
  await repo.start(r1(id));
  assert.equal((await repo.queue(s)).id, id, 'a running run is the live one');
  await repo.finish(r1(id), 'completed', { added: 3, updated: 1, removed: 0, errors: 0, seen: 4 }, null);
  assert.equal(await repo.active(s), null);
  const next = await repo.queue(s);
  assert.ok(next.made && next.id !== id);
  const runs = await repo.list(DEFAULT_TENANT, { storage_id: s.id, limit: 10, offset: 0 });
  assert.deepEqual(
    runs.map((r) => [r.id, r.status]),
    [
      [next.id, 'queued'],
      [id, 'completed'],
    ],
  );
  assert.deepEqual([runs[1].added, runs[1].seen, runs[1].guard_tripped], [3, 4, false]);
  assert.equal(await repo.lastFullSince(s, '2000-01-01T00:00:00.000Z'), next.id);
  assert.equal(await repo.lastFullSince(s, '2999-01-01T00:00:00.000Z'), null);
});

test('a failure is recorded once unless the walk recorded its own; the guard keeps its message through finish', async () => {
  const s = await storage();
  const a = (await repo.queue(s)).id;
  assert.equal(await repo.failure(r1(a), 'storage_unavailable', 'root gone'), 1);
  assert.equal(await repo.failure(r1(a), 'storage_unavailable', 'root gone'), 1, 'not twice');
  await repo.finish(r1(a), 'failed', { added: 0, updated: 0, removed: 0, errors: 1, seen: 0 }, 'root gone');
  const b = (await repo.queue(s)).id;
  await repo.recordError(r1(b), 'x/y', 'permission_denied', 'EACCES');
  await repo.recordError(r1(b), 'x/z', 'permission_denied', 'EACCES');
  assert.equal(await repo.failure(r1(b), 'internal', 'walk broke'), 2);
  await repo.tripGuard(r1(b), 'saw 1 of 100 entries: delete pass skipped');
  await repo.finish(r1(b), 'completed', { added: 0, updated: 0, removed: 0, errors: 2, seen: 1 }, null);
  const d = (await repo.detail(DEFAULT_TENANT, b))!;
  assert.deepEqual([d.guard_tripped, d.message, d.error_details.map((e) => e.path)], [true, 'saw 1 of 100 entries: delete pass skipped', ['x/y', 'x/z']]);
  assert.equal((await repo.detail(DEFAULT_TENANT, a))!.error_details[0].message, 'root gone');
  assert.equal(await repo.detail(DEFAULT_TENANT, 999_999), null);
  assert.equal(await repo.lastSeen(s), 1);
});

test('a storage deleted while it synced: its failure records nothing (its runs went with it)', async () => {
  const s = await storage();
  const run = (await repo.queue(s)).id;
  await repo.start(r1(run));
  await new StoragesRepo(t.db).delete(DEFAULT_TENANT, s.id);
  assert.equal(await repo.failure(r1(run), 'internal', 'walk broke'), 0);
  assert.equal(await repo.detail(DEFAULT_TENANT, run), null);
});

test('tenants: another tenant’s runs and errors are neither listed, found by id, queued into, changed nor counted', async () => {
  const a = await storage();
  const b = await storage(T2);
  const runA = (await repo.queue(a)).id;
  const runB = { id: (await repo.queue(b)).id, ...T2 };
  await repo.recordError(runB, 'x', 'permission_denied', 'EACCES');
  assert.deepEqual(
    (await repo.list(DEFAULT_TENANT, { limit: 100, offset: 0 })).map((r) => r.id).filter((id) => id === runA || id === runB.id),
    [runA],
    'tenant 1 lists its own run only',
  );
  assert.deepEqual(
    (await repo.list(T2, { limit: 100, offset: 0 })).map((r) => r.id),
    [runB.id],
  );
  assert.equal(await repo.detail(DEFAULT_TENANT, runB.id), null, 'another tenant’s run is not found by its id');
  assert.equal((await repo.detail(T2, runB.id))?.error_details.length, 1);
  assert.equal(await repo.active({ ...DEFAULT_TENANT, id: b.id }), null, 'nor seen as live');
  assert.equal(await repo.lastFullSince({ ...DEFAULT_TENANT, id: b.id }, '2000-01-01T00:00:00.000Z'), null);
  // Statements naming the wrong tenant change nothing and count nothing.
  await repo.start(r1(runB.id));
  await repo.tripGuard(r1(runB.id), 'not yours');
  await repo.finish(r1(runB.id), 'completed', { added: 1, updated: 0, removed: 0, errors: 0, seen: 1 }, null);
  assert.equal(await repo.failure(r1(runB.id), 'internal', 'not yours'), 0);
  const d = (await repo.detail(T2, runB.id))!;
  assert.deepEqual([d.status, d.guard_tripped, d.message, d.error_details.length], ['queued', false, null, 1]);
  assert.equal(await repo.failure(runB, 'internal', 'walk broke'), 1, 'its own tenant counts its error');
});
