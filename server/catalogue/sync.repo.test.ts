/**
 * The sync engine on `db.async` alone (SyncNodesRepo's units and reads, SyncRunsRepo's engine
 * statements), on SQLite and with TEST_DATABASE=postgres on PostgreSQL: the database handed to the
 * engine has no synchronous face, so a statement left on it (`db.sqlite`) fails
 * the test. Batches of 1,000 are crossed; a change, a removal and a folder revalidation follow.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SyncEngine } from './sync';
import { SyncRunsRepo } from './sync-runs.repo';
import { NodesRepo } from './nodes.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT } from '../db';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let sid = 0;
before(async () => {
  t = await openTestDb();
  sid = await testStorage(t.db);
});
after(() => t?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Tree = Map<string, number[]>; // folder -> file sizes (file-0, file-1, …; a size below 0: no such file)

/** A backend of top folders holding files `file-<i>` of the given sizes, listed folder by folder. */
function driver(tree: Tree) {
  const entry = (name: string, type: 'dir' | 'file', size = 0) => ({ name, type, size, mtime: 1_700_000_000_000 });
  return {
    async stat() {
      return entry('', 'dir');
    },
    async *list(dir: string) {
      if (dir === '') for (const d of tree.keys()) yield entry(d, 'dir');
      else for (const [i, size] of (tree.get(dir) ?? []).entries()) if (size >= 0) yield entry(`file-${i}`, 'file', size);
    },
  } as never;
}

const count = async (where = '') =>
  Number((await t.db.async.sql<{ n: number | string }>(`SELECT count(*) AS n FROM nodes WHERE storage_id = ?${where}`, [sid]))[0].n);

test('a full sync, a changed re-sync and a folder revalidation run on db.async alone', async () => {
  const added: number[] = [];
  const removed: string[] = [];
  const engine = new SyncEngine(asyncOnly(t.db), { onNodesAdded: (id) => added.push(id), onRemoved: (_, p) => removed.push(...p) });
  const runs = new SyncRunsRepo(t.db);
  const tree: Tree = new Map([
    ['a', Array(1100).fill(1)],
    ['b', Array(1100).fill(1)],
    ['c', Array(1100).fill(1)],
  ]);

  const first = await engine.full({ id: sid, ...DEFAULT_TENANT }, driver(tree), (await runs.queue({ id: sid, ...DEFAULT_TENANT })).id);
  assert.deepEqual(first, { added: 3303, updated: 0, removed: 0, errors: 0, seen: 3303 });
  assert.equal(await count(), 3303);
  assert.equal(added.length, 4, 'one notice per committed batch');

  await sleep(5); // the run below begins after every row above was written
  tree.set('a', Array(1100).fill(2)); // every file of a changed size
  tree.set('c', [...Array(1000).fill(1), ...Array(100).fill(-1)]); // c/file-1000..1099 gone
  const second = await engine.full({ id: sid, ...DEFAULT_TENANT }, driver(tree), (await runs.queue({ id: sid, ...DEFAULT_TENANT })).id);
  assert.deepEqual(second, { added: 0, updated: 1100, removed: 100, errors: 0, seen: 3203 });
  assert.equal(await count(" AND dir = 'a' AND size = 2"), 1100);
  assert.equal(await count(" AND dir = 'c'"), 1000);
  assert.equal(removed.length, 100);

  await sleep(5);
  tree.set('b', [-1, ...Array(1100).fill(1)]); // b/file-0 gone, b/file-1100 new
  const folder = await engine.folder({ id: sid, tenant_id: 1 }, driver(tree), 'b');
  assert.deepEqual([folder.added, folder.removed, folder.seen], [1, 1, 1100]);
  assert.equal(await count(" AND path = 'b/file-0'"), 0);
  assert.equal(await count(" AND path = 'b/file-1100'"), 1);
});

test('a folder opened before any sync gets its row and its parents’ rows, read in one go', async () => {
  const engine = new SyncEngine(asyncOnly(t.db));
  const deep = new Map([['x/y/z', [1, 1]]]);
  const d = {
    async stat() {
      return { name: '', type: 'dir' as const, size: 0, mtime: 0 };
    },
    async *list(dir: string) {
      for (const [i] of (deep.get(dir) ?? []).entries()) yield { name: `f${i}`, type: 'file' as const, size: 1, mtime: 1 };
    },
  } as never;
  const c = await engine.folder({ id: sid, tenant_id: 1 }, d, 'x/y/z');
  assert.equal(c.added, 5, 'x, x/y, x/y/z and the two files');
  assert.equal(await count(" AND path IN ('x', 'x/y', 'x/y/z', 'x/y/z/f0', 'x/y/z/f1')"), 5);
});

test('a folder revalidation racing the write gate on a file it did not list keeps the gate’s row', async () => {
  // Whichever commits first, the row must stay: written after the revalidation began, or inserted again after
  // it was removed. Checked and removed in two units (or a read committed one on PostgreSQL), it went.
  const nodes = new NodesRepo(t.db);
  const engine = new SyncEngine(asyncOnly(t.db));
  const empty = driver(new Map([['r', []]]));
  const gate = (path: string) =>
    t.db.async.unit((u) => nodes.upsertIn(u, { id: sid, tenant_id: 1 }, path, { name: path.slice(2), type: 'file', size: 7, mtime: 1 }));
  await t.db.async.unit((u) => nodes.upsertIn(u, { id: sid, tenant_id: 1 }, 'r', { name: 'r', type: 'dir', size: 0, mtime: 1 }));
  for (let i = 0; i < 8; i++) {
    await gate(`r/x${i}`);
    await sleep(3); // the row above is older than the revalidation
    await Promise.all([engine.folder({ id: sid, tenant_id: 1 }, empty, 'r'), gate(`r/x${i}`)]);
    assert.equal(await count(` AND path = 'r/x${i}'`), 1, `round ${i}`);
  }
});
