/**
 * WalkRows on a real catalogue: a folder's rows are read with the first batch that has one of its entries,
 * kept while the batches stay in it, and dropped (read afresh if it came back) once a batch has none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../db';
import type { WalkEntry } from '../storage';
import { NodesRepo } from './nodes.repo';
import { SyncNodesRepo } from './sync.repo';
import { foldersOf, WalkRows } from './walk-rows';
import { tempDir } from '../../test/helpers/tools';

const entry = (path: string): WalkEntry => ({ path, name: path.split('/').pop()!, type: 'file', size: 1, mtime: 0 });

test('WalkRows reads each folder once while the batches stay in it', async () => {
  const t = tempDir('filedock-walk-rows-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  try {
    db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
    const nodes = new NodesRepo(db);
    await db.async.unit(function* (tx) {
      for (const p of ['a/1', 'a/2', 'a/3', 'b/1', 'c/1'])
        yield* nodes.upsertIn(tx, { id: 1, tenant_id: 1 }, p, { name: p.slice(2), type: 'file', size: 1, mtime: 0 });
    });
    const reads: string[][] = [];
    const repo = new SyncNodesRepo(db);
    const rows = new WalkRows((dirs) => (reads.push(dirs), repo.dirRows({ id: 1, tenant_id: 1 }, dirs)));
    const first = await rows.of([entry('a/1'), entry('a/2')]);
    assert.equal(first.get('a/2')?.path, 'a/2');
    const second = await rows.of([entry('a/3'), entry('b/1'), entry('b/new')]);
    assert.equal(second.get('a/3')?.path, 'a/3', 'a/ kept from the first batch');
    assert.equal(second.has('b/new'), false);
    assert.equal(second.get('b/1')?.path, 'b/1');
    await rows.of([entry('c/1')]);
    await rows.of([entry('a/1')]);
    assert.deepEqual(reads, [['a'], ['b'], ['c'], ['a']], 'a/ read again only after a batch without it');
  } finally {
    await db.close();
    t.cleanup();
  }
});

test('foldersOf names each folder of a batch once, whatever the names look like', () => {
  const batch = ['x', 'a', 'a/1', 'a/2', 'ab/1', 'a/b/c', 'a/b/d', 'a/3', 'y', 'ab/2'].map(entry);
  assert.deepEqual(foldersOf(batch), ['', 'a', 'ab', 'a/b']);
  assert.deepEqual(foldersOf([]), []);
});
