/**
 * Issue 38's million-file catalogue (`millionTree()`: 1,000 folders × 1,000 empty files, a folder of
 * 100,000, a chain 100 folders deep of 255-byte names). One service, one storage, in order: the first
 * sync, a no-change re-sync, a re-sync after 1 % of the files changed (mtime), listings of the
 * 100,000-entry folder at 8 clients (first page, random pages), a sync after 40 % of the entries went
 * (400 folders and 40 % of `big/` moved out of the tree, put back at the end; a second when the tombstone
 * guard held the first back) with SQL checks of the catalogue (no orphans, counts equal to the disk's), and the watcher's start time and memory on the tree.
 * Anchor: `find <root> -printf '%s %T@ %p\n'`, timed right before each sync. Peak RSS is the service's
 * VmHWM; each sync's CPU seconds (the service's main thread and all its threads, from /proc) sit beside its wall time,
 * since on a shared machine CPU is what compares. `--profile`: the service runs with `--cpu-prof` and the first sync's top functions are printed.
 * `BENCH_DATABASE=postgres`: the service on a throwaway PostgreSQL cluster.
 *
 *   npm run bench -- million [--profile] [--syncs]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  apiClient,
  cpuTimes,
  ensureBuilt,
  latestMainProfile,
  mainThreadCpu,
  MILLION_HOME,
  millionTree,
  monotonicUs,
  profileSummary,
  startService,
  table,
  wrk,
} from './lib';
import { adminEnv } from './download';
import { startPostgres } from '../test/helpers/postgres';
import { watchLocal } from '../server/storage/drivers/local/local.watch';
import { MAX_PATH_CHARS } from '../server/lib/paths';

const PROFILE = process.argv.includes('--profile');
/** `--syncs`: the three syncs only (first, no change, 1 % changed), for A/B runs of the sync (`BENCH_DIST`). */
const SYNCS_ONLY = process.argv.includes('--syncs');
const root = millionTree();
const attic = join(MILLION_HOME, 'attic');
const pad = (n: number, w: number) => String(n).padStart(w, '0');
const gone = Array.from({ length: 400 }, (_, i) => `d${pad(Math.floor(i / 2) * 5 + (i % 2), 4)}`); // 400 of the 1,000 folders
const goneBig = Array.from({ length: 40_000 }, (_, i) => `file-${pad(Math.floor(i / 2) * 5 + (i % 2), 5)}.txt`); // 40 % of big/

/** Moves the "deleted" 40 % out of the tree (`out`) or back in. */
function moveDeleted(out: boolean): void {
  mkdirSync(join(attic, 'big'), { recursive: true });
  const mv = (rel: string) => (out ? renameSync(join(root, rel), join(attic, rel)) : renameSync(join(attic, rel), join(root, rel)));
  for (const d of gone) if (existsSync(join(out ? root : attic, d))) mv(d);
  for (const f of goneBig) if (existsSync(join(out ? root : attic, 'big', f))) mv(join('big', f));
}
moveDeleted(false); // a run that stopped midway left them out

/** One timed `find`, and the tree's folders and files that the catalogue must hold. */
function find(): { ms: number; dirs: number; files: number } {
  const t = performance.now();
  spawnSync('sh', ['-c', `find '${root}' -printf '%s %T@ %p\\n' > /dev/null`]);
  const ms = performance.now() - t;
  // Paths longer than a request may name are not catalogued (the bottom of the deep chain).
  const kinds = spawnSync(
    'sh',
    ['-c', `find '${root}' -mindepth 1 -printf '%y %P\\n' | awk 'length($0) <= ${MAX_PATH_CHARS} + 2 { print $1 }' | sort | uniq -c`],
    {
      encoding: 'utf8',
    },
  ).stdout;
  const n = (k: string) => Number(kinds.match(new RegExp(`(\\d+) ${k}$`, 'm'))?.[1] ?? 0);
  return { ms, dirs: n('d'), files: n('f') };
}

ensureBuilt();
const cluster = process.env.BENCH_DATABASE === 'postgres' ? await startPostgres() : null;
const dbUrl = cluster ? await cluster.createDatabase('bench_million') : null;
const profDir = mkdtempSync(join(tmpdir(), 'filedock-million-prof-'));
const svc = await startService({ ...adminEnv, ...(dbUrl ? { SERVICE_DATABASE_URL: dbUrl } : {}) }, PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
/** The service's CPU seconds so far: its main thread, and all its threads. */
const cpu = () => {
  const { user, sys } = cpuTimes(svc.proc.pid!);
  return { main: mainThreadCpu(svc.proc.pid!), all: user + sys };
};
const hwmMb = () => Number(spawnSync('grep', ['VmHWM', `/proc/${svc.proc.pid}/status`], { encoding: 'utf8' }).stdout.match(/(\d+)/)![1]) / 1024;
const api = await apiClient(svc.url, adminEnv.SERVICE_ADMIN_EMAIL, adminEnv.SERVICE_ADMIN_PASSWORD);

/** One SQL count on the service's database (SQLite file or PostgreSQL). */
async function count(sql: string): Promise<number> {
  if (dbUrl) {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    try {
      return Number((await c.query(sql)).rows[0].n);
    } finally {
      await c.end();
    }
  }
  const db = new Database(join(svc.dataDir, 'filedock.sqlite'), { readonly: true });
  try {
    return Number((db.prepare(sql).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

const rows: Array<Record<string, string | number>> = [];
const windows: Array<[number, number]> = [];
let id = 0;
/** Times `find`, then one full sync (the storage's first when `create`); a row in the table. */
async function step(what: string, target: number, create = false): Promise<{ run: any; disk: ReturnType<typeof find> }> {
  const disk = find();
  // find took long enough for the service to close our idle keep-alive socket: a GET (retried) makes a fresh one.
  await api('GET', '/api/capabilities');
  const t0 = monotonicUs();
  const cpu0 = cpu();
  let runId: number;
  if (create) {
    const st = await api('POST', '/api/admin/storages', { name: 'Million', driver: 'local', config: { path: root }, sync_mode: 'ondemand' });
    if (st.status !== 200) throw new Error(`storage: ${st.status} ${JSON.stringify(st.body)}`);
    id = st.body.id;
    runId = (await api('GET', `/api/admin/sync/runs?storage_id=${id}&limit=1`)).body.runs[0].id;
  } else runId = (await api('POST', `/api/admin/storages/${id}/sync`)).body.run_id;
  console.log(`${what}: find ${disk.ms.toFixed(0)} ms, run ${runId} ...`);
  const run = await api.waitRun(runId, 3_600_000);
  windows.push([t0, monotonicUs()]);
  const cpu1 = cpu();
  const ms = Date.parse(run.finished_at) - Date.parse(run.started_at);
  const ratio = ms / disk.ms;
  rows.push({
    step: what,
    'find ms': disk.ms.toFixed(0),
    'sync ms': ms,
    ratio: `${ratio.toFixed(2)}x ${ratio <= target ? 'PASS' : 'FAIL'} (≤ ${target}x)`,
    run: `${run.status}: +${run.added} ~${run.updated} -${run.removed}, seen ${run.seen}${run.guard_tripped ? ', guard tripped' : ''}`,
    'CPU s main / all': `${(cpu1.main - cpu0.main).toFixed(1)} / ${(cpu1.all - cpu0.all).toFixed(1)}`,
    'peak RSS MB': hwmMb().toFixed(0),
  });
  return { run, disk };
}

/** Catalogue checks against the disk: rows whose parent folder has no row, and counts by type. */
async function checks(disk: { dirs: number; files: number }): Promise<string> {
  const orphans = await count(
    `SELECT count(*) AS n FROM nodes c WHERE c.storage_id = ${id} AND c.dir <> '' AND NOT EXISTS (SELECT 1 FROM nodes p WHERE p.storage_id = c.storage_id AND p.path = c.dir)`,
  );
  const dirs = await count(`SELECT count(*) AS n FROM nodes WHERE storage_id = ${id} AND type = 'dir'`);
  const files = await count(`SELECT count(*) AS n FROM nodes WHERE storage_id = ${id} AND type = 'file'`);
  const ok = orphans === 0 && dirs === disk.dirs && files === disk.files;
  return `${ok ? 'PASS' : 'FAIL'}: ${orphans} orphans; folders ${dirs} (disk ${disk.dirs}), files ${files} (disk ${disk.files})`;
}

const verdicts: string[] = [];
/** Ends the steps early (`--syncs`). */
class Done extends Error {}
try {
  const first = await step('first sync', 3, true);
  const firstHwm = hwmMb();
  verdicts.push(`first sync peak RSS ${firstHwm.toFixed(0)} MB ${firstHwm <= 600 ? 'PASS' : 'FAIL'} (≤ 600 MB)`);
  verdicts.push(`after the first sync: ${await checks(first.disk)}`);
  // The names reach the search index from a background pass once the sync's batches pause (catalogue/search-index.ts):
  // on the event loop, 500 names a slice. The re-syncs are timed once it is done, and it is reported on its own.
  const idx0 = performance.now();
  const behind = dbUrl
    ? 'SELECT count(*) AS n FROM nodes n WHERE NOT EXISTS (SELECT 1 FROM search_fts f WHERE f.rowid = n.id)'
    : 'SELECT (SELECT max(id) FROM nodes) - coalesce((SELECT max(rowid) FROM search_fts), 0) AS n';
  while ((await count(behind)) > 0) await new Promise((r) => setTimeout(r, 1000));
  verdicts.push(`names indexed for search ${((performance.now() - idx0) / 1000).toFixed(0)} s after the first sync ended (re-syncs timed after it)`);
  await step('re-sync, nothing changed', 1.5);
  // 1 %: the first ten files of every 1,000-file folder get a new mtime.
  const when = new Date(Date.now() + 60_000);
  for (let d = 0; d < 1000; d++) for (let f = 0; f < 10; f++) utimesSync(join(root, `d${pad(d, 4)}`, `file-00${f}.txt`), when, when);
  await step('re-sync, 1 % of the files changed', 2);
  if (SYNCS_ONLY) throw new Done();

  const lua = `math.randomseed(os.time())
request = function() return wrk.format("GET", "/api/files/manager?path=/Million/big&limit=1000&offset=" .. math.random(0, 99000)) end`;
  const headers = { authorization: `Bearer ${api.token}` };
  for (const [what, script, target] of [
    ['first page', undefined, 30],
    ['random pages', lua, 50],
  ] as const) {
    const r = await wrk(`${svc.url}/api/files/manager?path=/Million/big&limit=1000`, { connections: 8, seconds: 10, headers, script });
    verdicts.push(
      `big/ (100,000 entries), ${what}, 1,000 rows, 8 clients: ${r.rps}/s, p50 ${r.p50} ms, p99 ${r.p99} ms ${r.p99 <= target && r.errors + r.non2xx === 0 ? 'PASS' : 'FAIL'} (≤ ${target} ms), ${r.errors + r.non2xx} errors`,
    );
  }

  moveDeleted(true);
  try {
    let del = await step('sync after 40 % deleted on disk', 2);
    // The tombstone guard (the spec's ~70 %) holds back a run that sees 60 %; the next compares with it.
    if (del.run.guard_tripped) del = await step('the next sync (guard passed)', 2);
    verdicts.push(`after the deletions: ${await checks(del.disk)}`);
  } finally {
    moveDeleted(false);
  }

  // The watcher (sync_mode fsnotify) on the whole tree, in this process: time to be ready, memory it keeps.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const rss0 = process.memoryUsage().rss;
  const t = performance.now();
  const stop = await watchLocal(root, () => undefined);
  const readyMs = performance.now() - t;
  gc?.();
  verdicts.push(
    `watcher on the tree: ready in ${readyMs.toFixed(0)} ms, heap +${((process.memoryUsage().heapUsed - heap0) / 2 ** 20).toFixed(1)} MiB, RSS +${((process.memoryUsage().rss - rss0) / 2 ** 20).toFixed(1)} MiB`,
  );
  stop();
} catch (e) {
  if (!(e instanceof Done)) throw e;
} finally {
  await svc.stop();
  await cluster?.destroy();
}
table(
  `million-file catalogue on ${cluster ? 'PostgreSQL' : 'SQLite'} (load ${spawnSync('uptime', { encoding: 'utf8' })
    .stdout.trim()
    .replace(/.*load average: /, '')})`,
  rows,
);
for (const v of verdicts) console.log(`- ${v}`);
if (PROFILE) {
  const prof = latestMainProfile(profDir);
  if (prof)
    for (const [i, what] of ['first sync', 'no-change re-sync', '1 % re-sync'].entries())
      table(`service profile, ${what} (self time, main thread)`, profileSummary(prof, 15, windows.slice(i, i + 1)));
}
