/**
 * The first sync's batch insert on PostgreSQL (one statement per batch, ids by path): against a real
 * cluster, every new row is catalogued once with its own id (a wrong id would leave the row unseen and
 * the delete pass would remove it), rows already there are kept, the stale one goes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT, openPostgresDatabase, type Db } from '../db';
import { NodesRepo } from './nodes.repo';
import { SyncEngine } from './sync';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';

const skip = needPostgres();
const file = (name: string, size = 1) => ({ name, type: 'file' as const, size, mtime: 1_700_000_000_000 });
const FILES = 2500;

describe('sync on PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let db: Db;
  before(async () => {
    cluster = await startPostgres();
    db = await openPostgresDatabase(await cluster.createDatabase('sync'));
    await db.async.sql("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')");
  });
  after(async () => {
    await db?.close();
    await cluster?.destroy();
  });

  test('a full sync inserts each batch in one statement and keeps every new row', async () => {
    const nodes = new NodesRepo(db);
    await db.async.unit(function* (t) {
      yield* nodes.upsertIn(t, { id: 1, tenant_id: 1 }, 'src', { name: 'src', type: 'dir', size: 0, mtime: 1_700_000_000_000 });
      yield* nodes.upsertIn(t, { id: 1, tenant_id: 1 }, 'src/f7', file('f7'));
      yield* nodes.upsertIn(t, { id: 1, tenant_id: 1 }, 'src/stale', file('stale'));
    });
    await new Promise((r) => setTimeout(r, 5)); // the rows above are older than the run
    const driver = {
      async stat() {
        return { name: '', type: 'dir' as const, size: 0, mtime: 0 };
      },
      async *list(dir: string) {
        if (dir === '') yield { name: 'src', type: 'dir' as const, size: 0, mtime: 1_700_000_000_000 };
        else for (let i = 0; i < FILES; i++) yield file(`f${i}`, i);
      },
    };
    await db.async.sql("INSERT INTO sync_runs (storage_id, kind, status, started_at) VALUES (1, 'full', 'running', '')");
    const counts = await new SyncEngine(db).full({ id: 1, ...DEFAULT_TENANT }, driver as never, 1);
    assert.equal(counts.added, FILES - 1, 'all but the file already there');
    assert.equal(counts.removed, 1, 'only the stale row');
    const rows = await db.async.sql<{ path: string; size: number; mime: string | null }>(
      "SELECT path, size, mime FROM nodes WHERE storage_id = 1 AND dir = 'src' ORDER BY id",
    );
    assert.equal(rows.length, FILES);
    assert.deepEqual(new Set(rows.map((r) => r.path)), new Set(Array.from({ length: FILES }, (_, i) => `src/f${i}`)));
    const f42 = rows.find((r) => r.path === 'src/f42')!;
    assert.equal(f42.size, 42);
  });
});
