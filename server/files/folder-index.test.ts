import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../db';
import { sortKey } from '../catalogue';
import { tempDir } from '../../test/helpers/tools';
import { ListingRepo, type Keyset } from './listing.repo';
import { MAX_ENTRIES, type IndexedPage, type PageSeek } from './folder-index';

let db: Db;
let cleanup: () => void;
let repo: ListingRepo;

before(() => {
  const t = tempDir('filedock-folder-index-');
  cleanup = t.cleanup;
  db = openDatabase(join(t.dir, 'db.sqlite'));
  db.sqlite!.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
  const ins = db.sqlite!.prepare(
    "INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, sort_key, updated_at, mime, thumb_state) VALUES (1, 'd', ?, ?, ?, ?, ?, ?, '', ?, ?)",
  );
  db.sqlite!.transaction(() => {
    // Equal sizes and times in places, so ties fall to the name and id as in SQL.
    for (let i = 0; i < 40; i++)
      ins.run(`f${i}.jpg`, `d/f${i}.jpg`, 'file', (i % 7) * 10, 1_700_000_000_000 + (i % 5), sortKey(`f${i}.jpg`), 'image/jpeg', i % 3 ? 'ready' : 'none');
    for (let i = 0; i < 6; i++) ins.run(`sub${i}`, `d/sub${i}`, 'dir', 0, 1_700_000_000_000 + i, sortKey(`sub${i}`), null, 'none');
  })();
  repo = new ListingRepo(db);
});
after(() => {
  db.close();
  cleanup();
});

const stamp = (id: number) => `/api/files/thumb?token=t${id}`;
/** The page when it came from the index (a folder small enough to hold). */
const indexed = (p: IndexedPage | PageSeek | null): IndexedPage => {
  assert.ok(p && 'entries' in p, 'a page from the index');
  return p;
};

test('every page by offset and by cursor equals the SQL page, in every sort and direction', async () => {
  const ix = new ListingRepo(db).indexes;
  for (const sort of ['name', 'size', 'modified'] as const) {
    for (const desc of [false, true]) {
      for (const limit of [1, 4, 7, 46, 100]) {
        for (const offset of [0, 1, 5, 6, 13, 45, 46, 60]) {
          const want = await repo.page({ storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit, offset, perm: 'editor' });
          const got = indexed(await ix.page({ storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit, offset, perm: 'editor', stampEpoch: 0 }));
          assert.deepEqual(JSON.parse(Buffer.concat(got.entries).toString()), JSON.parse(want.json), `${sort} ${desc} ${limit} ${offset}`);
          assert.equal(got.total, 46);
          assert.equal(got.next !== null, offset + limit < 46, 'a cursor exactly when rows follow');
        }
        // Walk by cursor: the same rows, each once, in the SQL order.
        const walked: unknown[] = [];
        let cursor: Keyset | undefined;
        for (let i = 0; i < 100; i++) {
          const p = indexed(await ix.page({ storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit, offset: 0, after: cursor, perm: 'editor', stampEpoch: 0 }));
          const sql = await repo.page({ storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit, offset: 0, after: cursor, perm: 'editor' });
          assert.deepEqual(JSON.parse(Buffer.concat(p.entries).toString()), JSON.parse(sql.json));
          walked.push(...JSON.parse(Buffer.concat(p.entries).toString()));
          if (!p.next) break;
          assert.deepEqual(p.next, sql.last, 'the cursor keys are the SQL keyset of the last row');
          cursor = p.next;
        }
        assert.equal(walked.length, 46);
      }
    }
  }
});

test('thumbnail URLs are stamped; a change of the folder rebuilds the index; a stamp epoch is part of the key', async () => {
  const ix = new ListingRepo(db).indexes;
  const page = async (epoch: number) =>
    JSON.parse(
      Buffer.concat(
        indexed(
          await ix.page({ storageId: 1, tenantId: 1, dir: 'd', sort: 'name', desc: false, limit: 100, offset: 0, perm: 'viewer', stamp, stampEpoch: epoch }),
        ).entries,
      ).toString(),
    ) as Array<{ name: string; thumb_url: string; perm: string }>;
  const first = await page(1);
  assert.ok(first.some((e) => e.thumb_url.startsWith('/api/files/thumb?token=t')));
  assert.ok(first.every((e) => e.perm === 'viewer'));
  db.sqlite!.prepare("UPDATE nodes SET name = 'renamed.jpg' WHERE path = 'd/f1.jpg'").run();
  assert.ok(!(await page(1)).some((e) => e.name === 'renamed.jpg'), 'no change event yet: the index is the cached one');
  ix.changed(1, 'd', false);
  assert.ok(
    (await page(1)).some((e) => e.name === 'renamed.jpg'),
    'the change event rebuilt it',
  );
  db.sqlite!.prepare("UPDATE nodes SET name = 'f1.jpg' WHERE path = 'd/f1.jpg'").run();
  assert.ok(
    (await page(2)).some((e) => e.name === 'f1.jpg'),
    'a new stamp epoch is a new index',
  );
});

test('a folder above MAX_ENTRIES: offset pages are slices of its chunks equal to the SQL pages, cursor pages SQL from the cursor; counted once; a cursor the index does not hold is refused', async () => {
  const ix = new ListingRepo(db).indexes;
  const ins = db.sqlite!.prepare(
    "INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, sort_key, updated_at) VALUES (1, 'big', ?, ?, ?, ?, ?, ?, '')",
  );
  const n = MAX_ENTRIES + 1;
  db.sqlite!.transaction(() => {
    // Folders among them, sizes and times with ties: every order's keyset crosses both types and equal values.
    for (let i = 0; i < n; i++) ins.run(`x${i}`, `big/x${i}`, i % 97 === 0 ? 'dir' : 'file', i % 13, i % 101, sortKey(`x${i}`));
  })();
  for (const sort of ['name', 'size', 'modified'] as const) {
    for (const desc of [false, true]) {
      // Within a chunk, across one boundary and several (limit 2,500), the folder's last rows, past its end.
      for (const [offset, limit] of [
        [0, 50],
        [0, 1000],
        [999, 2],
        [1000, 1000],
        [5500, 1000],
        [7999, 2500],
        [n - 1, 50],
        [n - 1000, 1000],
        [n, 50],
        [n + 1500, 50],
      ]) {
        const q = { storageId: 1, tenantId: 1, dir: 'big', sort, desc, limit, offset, perm: 'editor' as const };
        const got = indexed(await ix.page({ ...q, stampEpoch: 0 }));
        const want = await repo.page(q);
        assert.deepEqual(JSON.parse(Buffer.concat(got.entries).toString()), JSON.parse(want.json), `${sort} ${desc} ${offset}+${limit}`);
        assert.equal(got.total, n);
        assert.deepEqual(got.next, offset + limit < n ? want.last : null, `${sort} ${desc} ${offset}+${limit}: the cursor`);
        if (got.next) {
          // The cursor's page is an SQL page from the cursor: the same as the offset page after this one.
          const seek = await ix.page({ ...q, after: got.next, offset: 0, stampEpoch: 0 });
          assert.ok(seek && !('entries' in seek), 'a cursor page of a big folder is an SQL page');
          const byCursor = await repo.page({ ...q, ...seek });
          assert.deepEqual(JSON.parse(byCursor.json), JSON.parse((await repo.page({ ...q, offset: offset + limit })).json));
        }
      }
    }
  }
  // Chunks are of the folder's generation: a change noted reads them again.
  const at5000 = async () =>
    (
      JSON.parse(
        Buffer.concat(
          indexed(await ix.page({ storageId: 1, tenantId: 1, dir: 'big', sort: 'name', desc: false, limit: 1, offset: 5000, perm: 'editor', stampEpoch: 0 }))
            .entries,
        ).toString(),
      ) as Array<{ name: string }>
    )[0].name;
  const was = await at5000();
  db.sqlite!.prepare("UPDATE nodes SET name = 'renamed' WHERE dir = 'big' AND name = ?").run(was);
  assert.equal(await at5000(), was, 'no change noted yet: the chunk held');
  ix.changed(1, 'big', false);
  assert.equal(await at5000(), 'renamed', 'the change noted: the chunk read again');
  // The count is the folder's generation's: a change noted makes it count again.
  db.sqlite!.prepare("UPDATE nodes SET deleted_at = 'x' WHERE path = 'big/x1'").run();
  assert.equal(
    (await ix.page({ storageId: 1, tenantId: 1, dir: 'big', sort: 'name', desc: false, limit: 10, offset: 0, perm: 'editor', stampEpoch: 0 }))!.total,
    n,
  );
  ix.changed(1, 'big', true);
  assert.equal(
    (await ix.page({ storageId: 1, tenantId: 1, dir: 'big', sort: 'name', desc: false, limit: 10, offset: 0, perm: 'editor', stampEpoch: 0 }))!.total,
    n - 1,
  );
  assert.equal(
    await ix.page({
      storageId: 1,
      tenantId: 1,
      dir: 'd',
      sort: 'name',
      desc: false,
      limit: 10,
      offset: 0,
      after: { type: 'file', value: 0, key: 'zz', id: 999_999_999 },
      perm: 'editor',
      stampEpoch: 0,
    }),
    null,
  );
});
