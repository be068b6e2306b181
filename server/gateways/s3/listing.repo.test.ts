import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { S3ListingRepo } from './listing.repo';
import { openTestDb, testStorage, type TestDb } from '../../../test/helpers/test-database';
import { testNodes } from '../../../test/helpers/test-nodes';

const TOP = '\u{10ffff}';
let t: TestDb;
let repo: S3ListingRepo;
let sid = 0;
before(async () => {
  t = await openTestDb();
  repo = new S3ListingRepo(t.db);
  sid = await testStorage(t.db);
  await testNodes(t.db, sid, [
    { path: 'a', type: 'dir' },
    { path: 'a/x.txt', size: 3 },
    { path: 'a-b.txt' },
    { path: 'empty', type: 'dir' },
    { path: 'a/deep', type: 'dir' },
    { path: 'a/deep/y.txt' },
    { path: 'é.txt' },
    { path: 'Z.txt' },
  ]);
});
after(() => t?.close());

const keys = (rows: Array<{ k: string }>) => rows.map((r) => r.k);

test('a folder’s children come in S3 key order (UTF-8 bytes: a folder is its name and "/"), bounded and paged', async () => {
  assert.deepEqual(keys(await repo.children({ id: sid, tenant_id: 1 }, '', '', '', TOP, 10)), ['Z.txt', 'a-b.txt', 'a/', 'empty/', 'é.txt']);
  assert.deepEqual(keys(await repo.children({ id: sid, tenant_id: 1 }, '', 'a-b.txt', '', TOP, 2)), ['a/', 'empty/'], 'after a key, at most the limit');
  assert.deepEqual(keys(await repo.children({ id: sid, tenant_id: 1 }, '', '', 'a', 'a' + TOP, 10)), ['a-b.txt', 'a/'], 'by prefix');
  const [x] = await repo.children({ id: sid, tenant_id: 1 }, 'a', '', '', TOP, 10);
  assert.deepEqual({ ...x, size: Number(x.size) }, { k: 'deep/', type: 'dir', size: 0, mtime: 1_700_000_000_000, etag: null });
});

test('a recursive page lists files and empty folders below the base, in key order', async () => {
  const all = { sid, tid: 1, lo: '', hi: TOP, base: '', after: '', prefix: '', top: TOP, limit: 20 };
  assert.deepEqual(keys(await repo.subtree(all)), ['Z.txt', 'a-b.txt', 'a/deep/y.txt', 'a/x.txt', 'empty/', 'é.txt']);
  assert.deepEqual(keys(await repo.subtree({ ...all, base: 'a' })), ['a/deep/y.txt', 'a/x.txt'], 'confined to a key’s root: not its sibling a-b.txt');
  assert.deepEqual(keys(await repo.subtree({ ...all, after: 'a/deep/y.txt', limit: 2 })), ['a/x.txt', 'empty/']);
  assert.deepEqual(keys(await repo.subtree({ ...all, lo: 'a', hi: 'a/' + TOP, prefix: 'a/' })), ['a/deep/y.txt', 'a/x.txt']);
});
