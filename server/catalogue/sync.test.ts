/**
 * A sync's delete pass against writes that land while it walks: the write
 * gate catalogues a file (a copy running beside a poll) after the walk passed
 * its folder. The walk never saw it, yet it is on disk: the row must stay.
 * Rows that were already stale when the walk began still go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase, type Db } from '../db';
import type { Entry } from '../storage';
import { NodesRepo } from './nodes.repo';
import { SyncEngine } from './sync';
import { FolderTurns } from './folder-turns';
import { tempDir } from '../../test/helpers/tools';

/** Storage 1 of tenant 1, as the engine takes it. */
const S1 = { id: 1, ...DEFAULT_TENANT };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const file = (name: string) => ({ name, type: 'file' as const, size: 1, mtime: 1_700_000_000_000 });

/** The write gate's catalogue writes of storage 1, each one unit as the gate runs them. */
function gateOf(db: Db) {
  const nodes = new NodesRepo(db);
  return {
    upsert: (path: string, e: Entry) => db.async.unit((t) => nodes.upsertIn(t, { id: 1, tenant_id: 1 }, path, e)),
    removeTree: (path: string) => db.async.unit((t) => nodes.removeTreeIn(t, { id: 1, tenant_id: 1 }, path)),
    moveTree: (from: string, to: string) => db.async.unit((t) => nodes.moveTreeIn(t, { id: 1, tenant_id: 1 }, from, to)),
  };
}

async function fixture() {
  const t = tempDir('filedock-sync-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
  const nodes = gateOf(db);
  for (let i = 0; i < 10; i++) await nodes.upsert(`src/f${i}`, file(`f${i}`));
  await nodes.upsert('src', { name: 'src', type: 'dir', size: 0, mtime: 1_700_000_000_000 });
  await nodes.upsert('src/stale', file('stale')); // catalogued, no longer on disk
  return { db, nodes, close: async () => (await db.close(), t.cleanup()) };
}

/** A backend holding src/f0..f9 (or `names`); `during` runs while the walk is inside src. */
function driver(during: () => Promise<unknown>, names = Array.from({ length: 10 }, (_, i) => `f${i}`)) {
  return {
    async stat() {
      return { name: '', type: 'dir' as const, size: 0, mtime: 0 };
    },
    async *list(dir: string) {
      if (dir === '') {
        yield { name: 'src', type: 'dir' as const, size: 0, mtime: 1_700_000_000_000 };
        return;
      }
      for (const n of names) yield file(n);
      await sleep(5);
      await during();
    },
  };
}

const paths = (db: ReturnType<typeof openDatabase>) => db.sqlite.prepare('SELECT path FROM nodes WHERE storage_id = 1 ORDER BY path').pluck().all() as string[];

test('a full sync keeps what the gate wrote while it walked and removes what was stale before', async () => {
  const f = await fixture();
  try {
    // A folder deleted on disk with its file.
    await f.nodes.upsert('src/gone', { name: 'gone', type: 'dir', size: 0, mtime: 1_700_000_000_000 });
    await f.nodes.upsert('src/gone/x', file('x'));
    await sleep(2); // the fixture's rows are older than the run
    const removed: string[] = [];
    const engine = new SyncEngine(f.db, { onRemoved: (id, p) => removed.push(...p.map((x) => `${id}:${x}`)) });
    f.db.sqlite.prepare("INSERT INTO sync_runs (storage_id, kind, status, started_at) VALUES (1, 'full', 'running', '')").run();
    const counts = await engine.full(S1, driver(() => f.nodes.upsert('src/copied', file('copied'))) as never, 1);
    assert.deepEqual(paths(f.db), ['src', 'src/copied', ...Array.from({ length: 10 }, (_, i) => `src/f${i}`)]);
    assert.equal(counts.removed, 3, 'only the stale row and the gone folder with its file');
    assert.deepEqual(removed, ['1:src/gone', '1:src/stale'], 'the removal hook names the top of each removed subtree once');
  } finally {
    await f.close();
  }
});

test('a full sync that listed a rename before the gate recorded it waits for the record: the node keeps its id, no new node', async () => {
  const f = await fixture();
  try {
    const idOf = (p: string) => f.db.sqlite.prepare('SELECT id FROM nodes WHERE storage_id = 1 AND path = ?').pluck().get(p) as number | undefined;
    const id = idOf('src/f0');
    await sleep(2); // the fixture's rows are older than the run
    const turns = new FolderTurns();
    const added: number[] = [];
    const engine = new SyncEngine(f.db, { onFilesChanged: (_id, files) => void added.push(...files.map((x) => x.id)) }, turns);
    f.db.sqlite.prepare("INSERT INTO sync_runs (storage_id, kind, status, started_at) VALUES (1, 'full', 'running', '')").run();
    // A move through the file service: it holds its folder's turn from the rename on disk until the gate records
    // it. The walk lists the folder in between (the new name, not the old), then waits to write its batch.
    let listed!: () => void;
    const walked = new Promise<void>((r) => (listed = r));
    let recorded = false;
    const move = turns.run(1, ['src'], async () => {
      await walked;
      await sleep(100);
      await f.nodes.moveTree('src/f0', 'src/g0');
      recorded = true;
    });
    const renamed = driver(async () => listed(), ['g0', ...Array.from({ length: 9 }, (_, i) => `f${i + 1}`)]);
    const counts = await engine.full(S1, renamed as never, 1);
    await move;
    assert.ok(recorded);
    assert.equal(idOf('src/g0'), id, 'the moved row keeps its id');
    assert.equal(idOf('src/f0'), undefined);
    assert.equal(counts.added, 0, 'nothing catalogued as new');
    assert.deepEqual(added, [], 'no new file for the hooks (text extraction, thumbnails)');
  } finally {
    await f.close();
  }
});

test('a folder revalidation keeps a file the gate wrote after the listing, and a folder with a fresh child', async () => {
  const f = await fixture();
  try {
    await sleep(2);
    const removed: string[] = [];
    const engine = new SyncEngine(f.db, { onRemoved: (_id, p) => removed.push(...p) });
    const counts = await engine.folder({ id: 1, tenant_id: 1 }, driver(() => f.nodes.upsert('src/copied', file('copied'))) as never, 'src');
    assert.ok(paths(f.db).includes('src/copied'));
    assert.ok(!paths(f.db).includes('src/stale'));
    assert.equal(counts.removed, 1);
    assert.deepEqual(removed, ['src/stale'], 'the write the gate made meanwhile is no removal');
    // The root lists only `src`; a folder `out` the walk did not see but whose child was just written stays.
    await sleep(2);
    const since = Date.now();
    const root = {
      async *list() {
        yield { name: 'src', type: 'dir' as const, size: 0, mtime: 0 };
        while (Date.now() - since < 5) await sleep(1);
        await f.nodes.upsert('out/new', file('new'));
      },
    };
    await f.nodes.upsert('out', { name: 'out', type: 'dir', size: 0, mtime: 0 });
    f.db.sqlite.prepare("UPDATE nodes SET updated_at = '2000-01-01T00:00:00.000Z' WHERE path = 'out'").run();
    await engine.folder({ id: 1, tenant_id: 1 }, root as never, '');
    assert.ok(paths(f.db).includes('out/new') && paths(f.db).includes('out'));
  } finally {
    await f.close();
  }
});

test('a first sync of an empty catalogue meets a row the gate wrote meanwhile: the batch lands, the row is kept', async () => {
  const t = tempDir('filedock-sync-first-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  try {
    db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
    db.sqlite.prepare("INSERT INTO sync_runs (storage_id, kind, status, started_at) VALUES (1, 'full', 'running', '')").run();
    const nodes = gateOf(db);
    const backend = {
      async stat() {
        return { name: '', type: 'dir' as const, size: 0, mtime: 0 };
      },
      async *list() {
        await nodes.upsert('f3', { ...file('f3'), size: 9 }); // an upload lands while the walk lists
        for (let i = 0; i < 10; i++) yield file(`f${i}`);
      },
    };
    const counts = await new SyncEngine(db).full(S1, backend as never, 1);
    assert.equal(db.sqlite.prepare('SELECT count(*) FROM nodes WHERE storage_id = 1').pluck().get(), 10);
    assert.equal(counts.added, 9);
    assert.equal(db.sqlite.prepare("SELECT size FROM nodes WHERE path = 'f3'").pluck().get(), 9, 'the gate’s row is not overwritten by the walk’s older view');
  } finally {
    await db.close();
    t.cleanup();
  }
});

for (const where of ['this instance', 'another instance (its own connection)'] as const) {
  test(`a folder revalidation that listed a folder before the gate removed it on ${where} does not put it back`, async () => {
    const t = tempDir('filedock-sync-');
    const db = openDatabase(join(t.dir, 'db.sqlite'));
    const gateDb = where === 'this instance' ? db : openDatabase(join(t.dir, 'db.sqlite'));
    try {
      db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
      const gate = gateOf(gateDb); // the write gate's own repository, as in the service
      const dir = { type: 'dir' as const, size: 0, mtime: 1_700_000_000_000 };
      await gate.upsert('x', { name: 'x', ...dir });
      // The backend listed `x` with `tree` and `kept` in it; the gate then deleted `tree` (and moved `old` away).
      const listing = {
        async *list() {
          yield { name: 'tree', ...dir };
          yield file('kept');
          yield file('old');
          await sleep(5);
          await gate.removeTree('x/tree');
          await gate.upsert('x/old', file('old'));
          await gate.moveTree('x/old', 'x/new');
        },
      };
      await gate.upsert('x/tree', { name: 'tree', ...dir });
      await gate.upsert('x/tree/a.txt', file('a.txt'));
      await sleep(2);
      await new SyncEngine(db).folder({ id: 1, tenant_id: 1 }, listing as never, 'x');
      assert.deepEqual(paths(db), ['x', 'x/kept', 'x/new'], 'neither the removed folder nor the moved file came back');
    } finally {
      if (gateDb !== db) await gateDb.close();
      await db.close();
      t.cleanup();
    }
  });
}

test('a folder opened before the first sync (an object store prefix) gets its own row and its parents’ rows', async () => {
  const t = tempDir('filedock-sync-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  try {
    db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 's3', '', '')").run();
    await gateOf(db).upsert('a', { name: 'a', type: 'dir', size: 0, mtime: 1_700_000_000_000 });
    const prefix = {
      async *list() {
        yield file('readme.txt');
      },
    };
    await new SyncEngine(db).folder({ id: 1, tenant_id: 1 }, prefix as never, 'a/b/c');
    const rows = db.sqlite.prepare('SELECT path, dir, type FROM nodes WHERE storage_id = 1 ORDER BY path').all();
    assert.deepEqual(rows, [
      { path: 'a', dir: '', type: 'dir' },
      { path: 'a/b', dir: 'a', type: 'dir' },
      { path: 'a/b/c', dir: 'a/b', type: 'dir' },
      { path: 'a/b/c/readme.txt', dir: 'a/b/c', type: 'file' },
    ]);
  } finally {
    await db.close();
    t.cleanup();
  }
});

test('a folder check of 2,500 entries diffs batch by batch against the rows it read once: adds, changes and removals in every batch', async () => {
  const t = tempDir('filedock-sync-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  try {
    db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
    const gate = gateOf(db);
    for (let i = 0; i < 2000; i++) await gate.upsert(`big/f${i}`, file(`f${i}`));
    // On disk: f0..f1999 with f5 and f1500 grown (first and second batch), f2000..f2499 new (third); f3 gone.
    const listing = {
      async *list() {
        for (let i = 0; i < 2500; i++) if (i !== 3) yield { ...file(`f${i}`), size: i === 5 || i === 1500 ? 2 : 1 };
      },
    };
    const counts = await new SyncEngine(db).folder({ id: 1, tenant_id: 1 }, listing as never, 'big');
    assert.deepEqual(
      { ...counts, errors: undefined },
      { added: 501, updated: 2, removed: 1, errors: undefined, seen: 2499 },
      'the 500 new files and big/ itself',
    );
    assert.equal(db.sqlite.prepare("SELECT count(*) FROM nodes WHERE storage_id = 1 AND dir = 'big'").pluck().get(), 2499);
    const sizes = db.sqlite.prepare("SELECT size FROM nodes WHERE path IN ('big/f5', 'big/f1500', 'big/f6') ORDER BY path").pluck().all();
    assert.deepEqual(sizes, [2, 2, 1], 'f1500, f5, f6');
  } finally {
    await db.close();
    t.cleanup();
  }
});

test('a folder check that finds the rows already in step answers only once the change another check wrote is published (Refresh)', async () => {
  const f = await fixture();
  try {
    // The first check's folder.changed is still on its way (on PostgreSQL publishing takes a few round trips).
    let publish!: () => void;
    const published = new Promise<void>((r) => (publish = r));
    let calls = 0;
    const engine = new SyncEngine(f.db, { onFoldersChanged: () => (calls++ === 0 ? published : undefined) });
    const backend = driver(async () => undefined, ['f0', 'fresh']);
    const first = engine.folder(S1, backend as never, 'src');
    let answered = false;
    const refresh = engine.folder(S1, backend as never, 'src').then(() => (answered = true));
    for (let i = 0; i < 100 && !paths(f.db).includes('src/fresh'); i++) await sleep(5);
    await sleep(50);
    assert.ok(paths(f.db).includes('src/fresh'), 'the first check wrote the new file');
    assert.equal(answered, false, 'the second check found nothing to change, yet waits for the first check’s publication');
    publish();
    await Promise.all([first, refresh]);
    assert.equal(answered, true);
  } finally {
    await f.close();
  }
});
