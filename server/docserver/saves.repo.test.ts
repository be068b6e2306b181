import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DocserverSavesRepo } from './saves.repo';
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

/** A file row (saves reference nodes). */
async function node(name: string): Promise<number> {
  const [row] = await t.db.async.sql<{ id: number }>(
    "INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, sort_key, updated_at) VALUES (?, '', ?, ?, 'file', 0, 0, ?, '') RETURNING id",
    [storage, name, name, name],
  );
  return Number(row.id);
}

test('the newest save per node replaces the one before; a removed node takes its save with it', async () => {
  const a = await node('a.docx');
  const b = await node('b.docx');
  assert.equal(await repo.last(a), undefined);
  await repo.record({ node_id: a, doc_key: 'k1', lastsave: 1_000, etag: 'e1', saved_at: '2026-12-05T10:00:00.000Z' });
  await repo.record({ node_id: b, doc_key: 'kb', lastsave: 5, etag: 'eb', saved_at: '2026-12-05T10:00:00.000Z' });
  await repo.record({ node_id: a, doc_key: 'k2', lastsave: 2_000, etag: 'e2', saved_at: '2026-12-05T10:01:00.000Z' });
  assert.deepStrictEqual(await repo.last(a), { node_id: a, doc_key: 'k2', lastsave: 2_000, etag: 'e2', saved_at: '2026-12-05T10:01:00.000Z', tenant_id: 1 });
  assert.equal((await repo.last(b))?.doc_key, 'kb');
  await t.db.async.sql('DELETE FROM nodes WHERE id = ?', [a]);
  assert.equal(await repo.last(a), undefined);
});
