/**
 * Issue 38 at a size a test can afford, on real folders (SQLite, and PostgreSQL when a cluster can start):
 * a sync after 40 % of a tree went on disk converges in one run (once the tombstone guard let it) with no
 * orphan rows; the delete pass is
 * skipped only when no row can have gone unseen; a chain of 255-byte names past PATH_MAX syncs and lists,
 * and what lies deeper than a request may name is left out.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, readdirSync, rmdirSync, rmSync, unlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase, openPostgresDatabase, type Db } from '../db';
import type { StorageDriver } from '../storage';
import { localDriver } from '../storage/drivers/local';
import { MAX_PATH_CHARS } from '../lib/paths';
import { NodesRepo } from './nodes.repo';
import { SyncEngine, type SyncHooks } from './sync';
import { SyncRunsRepo } from './sync-runs.repo';
import { tempDir } from '../../test/helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';

const touch = (p: string) => closeSync(openSync(p, 'w'));
const long = (tag: string) => tag.padStart(255, 'n');

/**
 * Runs `fn` inside `dir`, reached by a relative `chdir` (a deep chain is past PATH_MAX for any path-taking
 * call), then comes back up with `..` (process.cwd() itself fails that deep).
 */
function inside<T>(dir: string, fn: () => T): T {
  process.chdir(dir);
  try {
    return fn();
  } finally {
    process.chdir('..');
  }
}

/** Folders and files below the current folder (a `find -mindepth 1`) whose path a request may name. */
function diskCounts(rel = ''): { dirs: number; files: number } {
  const out = { dirs: 0, files: 0 };
  for (const e of readdirSync('.', { withFileTypes: true })) {
    const path = rel ? `${rel}/${e.name}` : e.name;
    if (path.length > MAX_PATH_CHARS) continue;
    if (!e.isDirectory()) out.files++;
    else {
      const sub = inside(e.name, () => diskCounts(path));
      out.dirs += 1 + sub.dirs;
      out.files += sub.files;
    }
  }
  return out;
}

/** Removes what is below the current folder, however deep (rmSync fails past PATH_MAX). */
function emptyHere(): void {
  for (const e of readdirSync('.', { withFileTypes: true }))
    if (!e.isDirectory()) unlinkSync(e.name);
    else {
      inside(e.name, emptyHere);
      rmdirSync(e.name);
    }
}

/** `fn` with `dir` as the current folder (an absolute path), then back where the process was. */
function at<T>(dir: string, fn: () => T): T {
  const here = process.cwd();
  process.chdir(dir);
  try {
    return fn();
  } finally {
    process.chdir(here);
  }
}

function suite(name: string, open: () => Promise<Db>, close: () => Promise<void>, skip?: string | null) {
  describe(name, { skip: skip ?? false }, () => {
    let db: Db;
    let storage = 0;
    const tmp = tempDir('filedock-sync-converge-');
    before(async () => {
      db = await open();
    });
    after(async () => {
      await db?.close();
      await close();
      tmp.cleanup();
    });

    /** A new storage on folder `root` and its driver; `sync()` runs one full sync of it. */
    async function mount(root: string, hooks: SyncHooks = {}) {
      storage++;
      await db.async.sql("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES (?, ?, 'local', '', '')", [`st${storage}`, `S${storage}`]);
      const id = Number((await db.async.sql<{ id: number }>('SELECT max(id) AS id FROM storages'))[0].id);
      const driver: StorageDriver = await localDriver.create({ path: root }, { stateDir: tmp.dir, uid: `st${storage}` });
      const engine = new SyncEngine(db, hooks);
      const sync = async () => {
        await db.async.sql("INSERT INTO sync_runs (storage_id, kind, status, started_at) VALUES (?, 'full', 'running', '')", [id]);
        const run = Number((await db.async.sql<{ id: number }>('SELECT max(id) AS id FROM sync_runs'))[0].id);
        // Finished as the syncer finishes it: the tombstone guard compares with the last completed run.
        const counts = await engine.full({ id, ...DEFAULT_TENANT }, driver, run);
        await new SyncRunsRepo(db).finish({ id: run, ...DEFAULT_TENANT }, 'completed', counts, null);
        return counts;
      };
      const count = async (where: string) =>
        Number((await db.async.sql<{ n: number }>(`SELECT count(*) AS n FROM nodes c WHERE c.storage_id = ? AND ${where}`, [id]))[0].n);
      const check = async () => ({
        orphans: await count("c.dir <> '' AND NOT EXISTS (SELECT 1 FROM nodes p WHERE p.storage_id = c.storage_id AND p.path = c.dir)"),
        dirs: await count("c.type = 'dir'"),
        files: await count("c.type = 'file'"),
      });
      return { id, driver, sync, check };
    }

    test('40 % deleted on disk: past the tombstone guard, one sync converges, no orphans, counts equal to the disk', async () => {
      const root = join(tmp.dir, 'tree');
      for (let d = 0; d < 25; d++) {
        mkdirSync(join(root, `d${d}`, 'sub'), { recursive: true });
        for (let f = 0; f < 100; f++) touch(join(root, `d${d}`, f % 2 ? 'sub' : '', `f${f}`));
      }
      mkdirSync(join(root, 'big'));
      for (let f = 0; f < 2500; f++) touch(join(root, 'big', `f${f}`));
      const m = await mount(root);
      const first = await m.sync();
      assert.equal(first.added, 25 * 102 + 1 + 2500);
      const again = await m.sync();
      assert.deepEqual([again.added, again.updated, again.removed], [0, 0, 0], 'nothing changed, nothing removed');
      await new Promise((r) => setTimeout(r, 5)); // the rows are older than the next run
      for (let d = 0; d < 10; d++) rmSync(join(root, `d${d}`), { recursive: true }); // 1,010 rows as 10 subtrees
      for (let f = 0; f < 2500; f += 5) for (const g of [f, f + 1]) rmSync(join(root, 'big', `f${g}`)); // 1,000 scattered files
      // The tombstone guard (the spec's ~70 %) holds back the first run that sees 60 %; the next one compares
      // with that run, and converges.
      assert.equal((await m.sync()).removed, 0, 'guard tripped');
      const del = await m.sync();
      assert.equal(del.removed, 10 * 102 + 1000);
      const disk = at(root, () => diskCounts());
      assert.deepEqual(await m.check(), { orphans: 0, ...disk });
      assert.equal((await m.sync()).removed, 0, 'converged in one run');
    });

    test('a re-sync of a folder larger than a batch, read once for all its batches, sees every change in each', async () => {
      const root = join(tmp.dir, 'wide');
      for (const d of ['a', 'big', 'z']) mkdirSync(join(root, d), { recursive: true });
      for (let f = 0; f < 2500; f++) touch(join(root, 'big', `f${f}`));
      for (let f = 0; f < 10; f++) for (const d of ['a', 'z']) touch(join(root, d, `f${f}`));
      const m = await mount(root);
      await m.sync();
      await new Promise((r) => setTimeout(r, 5)); // the rows are older than the next run
      const later = new Date(Date.now() + 60_000);
      for (const f of [5, 1500, 2499]) utimesSync(join(root, 'big', `f${f}`), later, later);
      rmSync(join(root, 'big', 'f1200'));
      for (let f = 0; f < 10; f++) touch(join(root, 'big', `new${f}`));
      touch(join(root, 'z', 'new'));
      const run = await m.sync();
      assert.deepEqual([run.added, run.updated, run.removed], [11, 3, 1]);
      assert.deepEqual(await m.check(), { orphans: 0, ...at(root, () => diskCounts()) });
      assert.deepEqual([(await m.sync()).added, (await m.sync()).updated], [0, 0], 'converged');
    });

    test('the delete pass still runs when a row the run saw was removed during it', async () => {
      const root = join(tmp.dir, 'gate');
      mkdirSync(join(root, 'src'), { recursive: true });
      for (let f = 0; f < 10; f++) touch(join(root, 'src', `f${f}`));
      const nodes = new NodesRepo(db);
      let gate = async () => {};
      const m = await mount(root, { beforeRemove: () => gate() });
      await m.sync();
      await db.async.unit((t) => nodes.upsertIn(t, { id: m.id, tenant_id: 1 }, 'src/stale', { name: 'stale', type: 'file', size: 0, mtime: 0 }));
      await new Promise((r) => setTimeout(r, 5));
      // The gate removes a row the run saw, after its batches: as many rows as seen ids, yet `stale` went unseen.
      gate = async () => void (await db.async.unit((t) => nodes.removeTreeIn(t, { id: m.id, tenant_id: 1 }, 'src/f0')));
      const run = await m.sync();
      assert.equal(run.removed, 1);
      assert.equal((await m.check()).files, 9, 'stale removed (f0 comes back with the next sync)');
    });

    test('a chain of 255-byte names past PATH_MAX syncs and lists; deeper than a request may name is left out', async () => {
      const root = join(tmp.dir, 'deep');
      mkdirSync(root);
      // 40 levels (10 KB): made with relative calls, as no path-taking call accepts such paths.
      at(root, () => {
        const down = (i: number): void => {
          if (i === 40) return;
          mkdirSync(long(`-${i}`));
          inside(long(`-${i}`), () => (touch(long('.txt')), down(i + 1)));
        };
        down(0);
      });
      const m = await mount(root);
      const run = await m.sync();
      const kept = 31; // levels whose file's relative path stays within MAX_PATH_CHARS (256 per level)
      assert.equal(run.errors, 0);
      assert.deepEqual(await m.check(), { orphans: 0, dirs: 32, files: kept });
      assert.deepEqual(await m.check(), { orphans: 0, ...at(root, () => diskCounts()) });
      const dir20 = Array.from({ length: 20 }, (_, i) => long(`-${i}`)).join('/');
      const page = await new NodesRepo(db).list({ id: m.id, tenant_id: 1 }, dir20, { sort: 'name', desc: false, limit: 10, offset: 0 });
      assert.deepEqual(
        page.rows.map((r) => [r.type, r.name.length, r.path.length]),
        [
          ['dir', 255, dir20.length + 256],
          ['file', 255, dir20.length + 256],
        ],
      );
      assert.equal((await m.sync()).removed, 0, 'a re-sync keeps every row');
      at(root, emptyHere);
    });
  });
}

const tmpDb = tempDir('filedock-sync-converge-db-');
suite(
  'sync convergence on SQLite',
  async () => openDatabase(join(tmpDb.dir, 'db.sqlite')),
  async () => tmpDb.cleanup(),
);
let cluster: PgCluster | undefined;
suite(
  'sync convergence on PostgreSQL',
  async () => {
    cluster = await startPostgres();
    return openPostgresDatabase(await cluster.createDatabase('converge'));
  },
  async () => cluster?.destroy(),
  needPostgres(),
);
