/**
 * The SQL of the hot queries (listing pages, search, S3 listings) is snapshotted, so a
 * change to it is visible in review (STYLE.md item 6): these stay raw SQL
 * because SQLite builds the JSON of a page itself (measured: docs/benchmarks.md).
 * After an intended change, run `UPDATE_SNAPSHOTS=1 npm test -- test/architecture`
 * and read the diff of hot-queries.sql.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { openDatabase } from '../../server/db';
import { ListingRepo } from '../../server/files/listing.repo';
import { FolderIndexRepo } from '../../server/files/folder-index.repo';
import { SearchService } from '../../server/files/search.service';
import { S3ListingRepo } from '../../server/gateways/s3/listing.repo';
import type { ActorFiles } from '../../server/files';
import { tempDir } from '../helpers/tools';

const SNAPSHOT = new URL('./hot-queries.sql', import.meta.url).pathname;

test('the SQL of listing pages and search is the reviewed one', async () => {
  const t = tempDir('filedock-sql-');
  const db = openDatabase(`${t.dir}/db.sqlite`);
  const seen: string[] = [];
  const saw = (sql: string) => seen.push(sql.replace(/\s+/g, ' ').trim());
  const prepare = db.sqlite.prepare.bind(db.sqlite);
  db.sqlite.prepare = ((sql: string) => (saw(sql), prepare(sql))) as typeof db.sqlite.prepare;
  // The search's statements are prepared on a reader thread (db.async.aside): seen as they are sent.
  const aside = db.async.aside;
  db.async.aside = {
    all: (q) => (saw(q.compile().sql), aside.all(q)),
    sql: (text, params, o) => (saw(text), aside.sql(text, params, o)),
  };
  try {
    db.sqlite.prepare("INSERT INTO storages (id, uid, name, driver, config, created_at, updated_at) VALUES (1, 'st1', 'S', 'local', '{}', '', '')").run();
    seen.length = 0;
    const S = { id: 1, tenant_id: 1 };
    const listing = new ListingRepo(db);
    // The folder index's count (read when an index is built; it used to be prepared with the repository).
    await new FolderIndexRepo(db).size(S, '');
    const shapes = [
      { sort: 'name', desc: false },
      { sort: 'name', desc: false, after: { type: 'dir', value: 0, key: 'a', id: 1 } },
      { sort: 'name', desc: false, after: { type: 'file', value: 0, key: 'a', id: 1 } },
      { sort: 'size', desc: true },
      { sort: 'modified', desc: false, after: { type: 'file', value: 5, key: 'a', id: 1 } },
    ] as const;
    await listing.probe(S, '');
    for (const s of shapes) await listing.page({ storageId: 1, tenantId: 1, dir: '', limit: 10, offset: 0, perm: 'editor', ...s });
    // A storage holding app locks: its pages join them (FileLocks.any).
    await new ListingRepo(db, () => true).page({ storageId: 1, tenantId: 1, dir: '', limit: 10, offset: 0, perm: 'editor', sort: 'name', desc: false });
    const scope = {
      actor: { kind: 'person' },
      visible: () => [{ storage: { id: 1, tenant_id: 1, name: 'S', driver: 'local', read_only: 0 }, level: 'editor' }],
      target: () => ({ storage: S, rel: '' }),
    } as unknown as ActorFiles;
    const search = new SearchService(db);
    await search.search(scope, { q: 'report', limit: 50 });
    await search.search(scope, { q: 'ab', type: 'file', ext: ['pdf'], min_size: 1, limit: 50 });
    await new SearchService(db, undefined, () => true).search(scope, { q: 'report', limit: 50 });
    // The S3 gateway's ListObjects pages: delimited, then recursive.
    const s3 = new S3ListingRepo(db);
    await s3.children(S, '', '', '', '\u{10ffff}', 10);
    await s3.subtree({ sid: 1, tid: 1, lo: '', hi: '\u{10ffff}', base: '', after: '', prefix: '', top: '\u{10ffff}', limit: 10 });
    const text = [...new Set(seen)].join(';\n\n') + ';\n';
    if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(SNAPSHOT)) writeFileSync(SNAPSHOT, text);
    assert.equal(text, readFileSync(SNAPSHOT, 'utf8'), 'hot query SQL changed: review it, then UPDATE_SNAPSHOTS=1');
  } finally {
    await db.close();
    t.cleanup();
  }
});
