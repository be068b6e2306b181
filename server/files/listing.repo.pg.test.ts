/**
 * The listing page read on PostgreSQL's pool (`db.async`), against a real cluster: it answers exactly
 * what SQLite answers for the same rows, it leaves the event loop free while PostgreSQL works, and a
 * database that goes away is `database_busy`, served again once it is back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, openPostgresDatabase, type Db } from '../db';
import { tempDir } from '../../test/helpers/tools';
import { sortKey } from '../catalogue';
import { ListingRepo, type Keyset, type PageQuery } from './listing.repo';
import { FolderIndexRepo } from './folder-index.repo';
import { isAppError } from '../errors';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';

const skip = needPostgres();

describe('listing pages on the pool (PostgreSQL)', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let db: Db;
  let lite: Db;
  let repo: ListingRepo;
  let liteRepo: ListingRepo;
  const FILES = 3000;
  const dir = tempDir('filedock-listing-pg-');

  const fill = (d: Db) =>
    d.async.unit(function* (t) {
      yield* t.sql("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')");
      const ins = "INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, sort_key, updated_at, mime) VALUES (1, 'd', ?, ?, ?, ?, ?, ?, '', ?)";
      for (let i = 0; i < FILES; i++)
        yield* t.sql(ins, [`f${i}.txt`, `d/f${i}.txt`, 'file', (i * 7) % 101, 1_700_000_000_000 + i, sortKey(`f${i}.txt`), 'text/plain']);
      for (let i = 0; i < 5; i++) yield* t.sql(ins, [`sub${i}`, `d/sub${i}`, 'dir', 0, 1_700_000_000_000, sortKey(`sub${i}`), null]);
    });

  before(async () => {
    cluster = await startPostgres();
    db = await openPostgresDatabase(await cluster.createDatabase('listing'));
    lite = openDatabase(`${dir.dir}/lite.sqlite`);
    await fill(db);
    await fill(lite);
    repo = new ListingRepo(db);
    liteRepo = new ListingRepo(lite);
  });
  after(async () => {
    await db?.close();
    await lite?.close();
    await cluster?.destroy();
    dir.cleanup();
  });

  test('the page equals the SQLite page in every sort and direction, keyset walk included', async () => {
    for (const sort of ['name', 'size', 'modified'] as const) {
      for (const desc of [false, true]) {
        const q: PageQuery = { storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit: 700, offset: 0, perm: 'viewer' };
        let after: Keyset | undefined;
        let seen = 0;
        for (let i = 0; i < 10; i++) {
          const [sync, async] = [await liteRepo.page({ ...q, after }), await repo.page({ ...q, after })];
          // PostgreSQL writes the JSON with spaces: the same entries, parsed.
          assert.deepEqual({ ...async, json: JSON.parse(async.json) }, { ...sync, json: JSON.parse(sync.json) }, `${sort} ${desc} page ${i}`);
          assert.equal(async.total, FILES + 5);
          seen += async.count;
          if (async.count < q.limit) break;
          after = async.last;
        }
        assert.equal(seen, FILES + 5, `${sort} ${desc}: every row once`);
      }
    }
    // A big folder's anchors (folder-index.ts) are SQLite's, and a page seeking from one is the offset page.
    for (const sort of ['name', 'size', 'modified'] as const) {
      for (const desc of [false, true]) {
        const anchors = await new FolderIndexRepo(db).anchors({ id: 1, tenant_id: 1 }, 'd', sort, desc, 700);
        assert.deepEqual(anchors, await new FolderIndexRepo(lite).anchors({ id: 1, tenant_id: 1 }, 'd', sort, desc, 700), `${sort} ${desc}: anchors`);
        assert.equal(anchors.length, Math.floor((FILES + 5) / 700));
        const q: PageQuery = { storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit: 50, offset: 2 * 700 + 30, perm: 'viewer' };
        const seek = await repo.page({ ...q, after: anchors[1], offset: 30 });
        assert.deepEqual(JSON.parse(seek.json), JSON.parse((await repo.page(q)).json), `${sort} ${desc}: seek page`);
      }
    }
    const byOffset = await repo.page({ storageId: 1, tenantId: 1, dir: 'd', sort: 'name', desc: false, limit: 3, offset: 5, perm: 'editor' });
    assert.deepEqual(
      JSON.parse(byOffset.json).map((e: { name: string; perm: string }) => `${e.name}:${e.perm}`),
      ['f0.txt:editor', 'f1.txt:editor', 'f2.txt:editor'],
    );
  });

  test('the event loop runs while the page is read', async () => {
    const q: PageQuery = { storageId: 1, tenantId: 1, dir: 'd', sort: 'size', desc: true, limit: 3000, offset: 0, perm: 'viewer' };
    const first = await Promise.race([repo.page(q).then(() => 'page'), new Promise((r) => setImmediate(() => r('event loop')))]);
    assert.equal(first, 'event loop');
  });

  test('a database that goes away is database_busy, and is read again once it is back', async () => {
    const q: PageQuery = { storageId: 1, tenantId: 1, dir: 'd', sort: 'name', desc: false, limit: 10, offset: 0, perm: 'viewer' };
    await cluster.stop('immediate');
    try {
      const t0 = Date.now();
      await assert.rejects(repo.page(q), (e) => isAppError(e) && e.code === 'database_busy');
      assert.ok(Date.now() - t0 < 5000, 'fails fast, not after a long hang');
    } finally {
      await cluster.start();
    }
    let page;
    for (let i = 0; i < 50 && !page; i++) page = await repo.page(q).catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 200)));
    assert.equal(page?.count, 10);
  });
});
