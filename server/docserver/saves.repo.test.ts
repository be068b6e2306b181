import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DocserverSavesRepo } from './saves.repo';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: DocserverSavesRepo;
let storage = 0;
before(async () => {
  t = await openTestDb();
  repo = new DocserverSavesRepo(t.db);
  storage = await testStorage(t.db);
});
after(() => t?.close());

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

/** A file row of a storage (saves reference nodes). */
async function node(name: string, s = T1, storageId = storage): Promise<number> {
  const [row] = await t.db.async.sql<{ id: number }>(
    "INSERT INTO nodes (tenant_id, storage_id, dir, name, path, type, size, mtime, sort_key, updated_at) VALUES (?, ?, '', ?, ?, 'file', 0, 0, ?, '') RETURNING id",
    [s.tenant_id, storageId, name, name, name],
  );
  return Number(row.id);
}

test('the newest save per node replaces the one before; a removed node takes its save with it', async () => {
  const a = await node('a.docx');
  const b = await node('b.docx');
  assert.equal(await repo.last(T1, a), undefined);
  await repo.record(T1, { node_id: a, doc_key: 'k1', lastsave: 1_000, etag: 'e1', saved_at: '2026-12-05T10:00:00.000Z' });
  await repo.record(T1, { node_id: b, doc_key: 'kb', lastsave: 5, etag: 'eb', saved_at: '2026-12-05T10:00:00.000Z' });
  await repo.record(T1, { node_id: a, doc_key: 'k2', lastsave: 2_000, etag: 'e2', saved_at: '2026-12-05T10:01:00.000Z' });
  assert.deepStrictEqual(await repo.last(T1, a), { node_id: a, doc_key: 'k2', lastsave: 2_000, etag: 'e2', saved_at: '2026-12-05T10:01:00.000Z' });
  assert.equal((await repo.last(T1, b))?.doc_key, 'kb');
  await t.db.async.sql('DELETE FROM nodes WHERE tenant_id = 1 AND id = ?', [a]);
  assert.equal(await repo.last(T1, a), undefined);
});

test('tenants: another tenant’s save is neither read nor replaced', async () => {
  const theirs = await node('t2.docx', T2, await testStorage(t.db, 'Files', T2));
  await repo.record(T2, { node_id: theirs, doc_key: 'k-t2', lastsave: 10, etag: 'e-t2', saved_at: '2026-12-05T10:00:00.000Z' });
  assert.equal(await repo.last(T1, theirs), undefined);
  // A record naming tenant 1 for tenant 2's node writes nothing over it (the upsert's conflict branch names the tenant).
  await repo.record(T1, { node_id: theirs, doc_key: 'forged', lastsave: 99, etag: 'x', saved_at: '2026-12-05T11:00:00.000Z' });
  assert.equal((await repo.last(T2, theirs))?.doc_key, 'k-t2');
  assert.equal(await repo.last(T1, theirs), undefined);
});
