import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../db';
import { sortKey } from '../catalogue';
import { tempDir } from '../../test/helpers/tools';
import { PROBE_SQL, ListingRepo, pageSql, type Keyset } from './listing.repo';

let db: Db;
let cleanup: () => void;
let repo: ListingRepo;

before(() => {
  const t = tempDir('filedock-listing-');
  cleanup = t.cleanup;
  db = openDatabase(join(t.dir, 'db.sqlite'));
  db.sqlite!.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
  const ins = db.sqlite!.prepare(
    "INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, sort_key, updated_at, mime) VALUES (1, 'd', ?, ?, ?, ?, ?, ?, '', ?)",
  );
  db.sqlite!.transaction(() => {
    for (let i = 0; i < 30; i++) ins.run(`f${i}.txt`, `d/f${i}.txt`, 'file', i * 10, 1_700_000_000_000 + i, sortKey(`f${i}.txt`), 'text/plain');
    for (let i = 0; i < 5; i++) ins.run(`sub${i}`, `d/sub${i}`, 'dir', 0, 1_700_000_000_000, sortKey(`sub${i}`), null);
  })();
  repo = new ListingRepo(db);
});
after(() => {
  db.close();
  cleanup();
});

const names = (json: string) => (JSON.parse(json) as Array<{ name: string }>).map((e) => e.name);

test('keyset pages walk every sort and direction exactly once, folders first', async () => {
  for (const sort of ['name', 'size', 'modified'] as const) {
    for (const desc of [false, true]) {
      const full = names((await repo.page({ storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit: 100, offset: 0, perm: 'editor' })).json);
      assert.deepEqual(full.slice(0, 5).sort(), ['sub0', 'sub1', 'sub2', 'sub3', 'sub4'], `${sort} ${desc}: folders first`);
      const walked: string[] = [];
      let after: Keyset | undefined;
      for (let i = 0; i < 20; i++) {
        const p = await repo.page({ storageId: 1, tenantId: 1, dir: 'd', sort, desc, limit: 4, offset: 0, after, perm: 'editor' });
        walked.push(...names(p.json));
        if (p.count < 4) break;
        after = p.last;
      }
      assert.deepEqual(walked, full, `${sort} ${desc}`);
    }
  }
});

test('entries are built by SQLite in the File entry shape', async () => {
  const [f] = JSON.parse((await repo.page({ storageId: 1, tenantId: 1, dir: 'd', sort: 'size', desc: true, limit: 6, offset: 5, perm: 'viewer' })).json);
  assert.deepEqual(f, {
    id: 30,
    name: 'f29.txt',
    type: 'file',
    size: 290,
    modified: new Date(1_700_000_000_029).toISOString(),
    mime: 'text/plain',
    etag: `"${(290).toString(16)}-${(1_700_000_000_029).toString(16)}"`,
    is_image: false,
    is_video: false,
    thumb_url: '',
    locked: false,
    lock: null,
    app_state: [],
    perm: 'viewer',
  });
});

test('hot listing queries stay index ranges (query plan snapshot)', async () => {
  const plan = (sort: 'name' | 'size', keyset?: 'dir' | 'file') =>
    db
      .sqlite!.prepare('EXPLAIN QUERY PLAN ' + pageSql(sort, false, keyset))
      .all({ t: 1, s: 1, d: 'd', perm: 'viewer', limit: 1000, offset: 0, av: 0, ak: 'a', ai: 0 })
      .map((r) => (r as { detail: string }).detail);
  assert.deepEqual(plan('name'), ['SEARCH nodes USING INDEX nodes_live_listing (storage_id=? AND dir=?)']);
  assert.deepEqual(plan('name', 'file'), ['SEARCH nodes USING INDEX nodes_live_listing (storage_id=? AND dir=? AND type=? AND sort_key>?)']);
});

test('a folder is known by its own row or a child, filled by a child, through the indexes (every listing asks)', async () => {
  assert.deepEqual(await repo.probe({ id: 1, tenant_id: 1 }, 'd'), { type: null, known: true, filled: true }, 'by its children');
  assert.deepEqual(await repo.probe({ id: 1, tenant_id: 1 }, 'd/sub0'), { type: 'dir', known: true, filled: false }, 'by its own row');
  assert.equal((await repo.probe({ id: 1, tenant_id: 1 }, 'd/f0.txt')).type, 'file');
  assert.deepEqual(await repo.probe({ id: 1, tenant_id: 1 }, 'nowhere'), { type: null, known: false, filled: false });
  assert.deepEqual(await repo.probe({ id: 2, tenant_id: 1 }, 'd'), { type: null, known: false, filled: false }, 'another storage');
  const plan = db
    .sqlite!.prepare('EXPLAIN QUERY PLAN ' + PROBE_SQL)
    .all({ t: 1, s: 1, p: 'd' })
    .map((r) => (r as { detail: string }).detail);
  assert.ok(plan.includes('SEARCH nodes USING INDEX nodes_path (storage_id=? AND path=?)'), plan.join('; '));
  assert.ok(plan.includes('SEARCH nodes USING INDEX nodes_live_listing (storage_id=? AND dir=?)'), plan.join('; '));
});
