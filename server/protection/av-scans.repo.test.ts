import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AvScansRepo, type AvScanRow } from './av-scans.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: AvScansRepo;
let storage = 0;
before(async () => {
  t = await openTestDb();
  repo = new AvScansRepo(t.db);
  storage = await testStorage(t.db);
});
after(() => t?.close());

const scan = (path: string, v: Partial<AvScanRow>): AvScanRow => ({
  storage_id: storage,
  path,
  state: 'clean',
  signature: null,
  detail: null,
  written_at: '2026-12-05T10:00:00.000Z',
  scanned_at: '2026-12-05T10:00:01.000Z',
  ...v,
});

test('one outcome per path, the newest scan replacing the one before', async () => {
  assert.equal(await repo.outcome(T1, storage, 'a.exe'), undefined);
  await repo.record(T1, scan('a.exe', {}));
  await repo.record(T1, scan('b.exe', { state: 'error', detail: 'timeout' }));
  await repo.record(
    T1,
    scan('a.exe', { state: 'infected', signature: 'Eicar-Test-Signature', detail: 'quarantined at .trash/a.exe', scanned_at: '2026-12-05T10:05:00.000Z' }),
  );
  assert.deepEqual(await repo.outcome(T1, storage, 'a.exe'), {
    state: 'infected',
    signature: 'Eicar-Test-Signature',
    detail: 'quarantined at .trash/a.exe',
    written_at: '2026-12-05T10:00:00.000Z',
    scanned_at: '2026-12-05T10:05:00.000Z',
  });
  assert.equal((await repo.outcome(T1, storage, 'b.exe'))?.state, 'error');
});

test('scans of one new path recorded at once leave one row, none failing on the unique path', async () => {
  await Promise.all(
    ['clean', 'error', 'skipped', 'clean'].map((state, i) =>
      repo.record(T1, scan('new.bin', { state: state as AvScanRow['state'], scanned_at: `2026-12-05T11:00:0${i}.000Z` })),
    ),
  );
  const [{ n }] = await t.db.async.sql<{ n: number | string }>("SELECT count(*) AS n FROM av_scans WHERE path = 'new.bin'");
  assert.equal(Number(n), 1);
});

test('two tenants: a scan is recorded in its storage’s tenant, read only there, and not replaced from another', async () => {
  const theirs = await testStorage(t.db, 'Files', T2);
  await repo.record(T2, scan('x.exe', { storage_id: theirs, state: 'infected', signature: 'Eicar' }));
  assert.equal(await repo.outcome(T1, theirs, 'x.exe'), undefined, 'not read from another tenant');
  await repo.record(T1, scan('x.exe', { storage_id: theirs, state: 'clean' }));
  assert.equal((await repo.outcome(T2, theirs, 'x.exe'))?.state, 'infected', 'not replaced');
  const [row] = await t.db.async.sql<{ tenant_id: number | string }>("SELECT tenant_id FROM av_scans WHERE tenant_id = 2 AND path = 'x.exe'");
  assert.equal(Number(row.tenant_id), 2);
});
