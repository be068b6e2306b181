/**
 * A lean start (issue 37): wall time and peak RSS of `service version`
 * (target ≤ 0.5 s), idle RSS of a server with a fresh data folder and no
 * storages, 5 s after it first answers (target ≤ 120 MB), and how many module
 * files each loads (scripts/load-recorder.mjs, in a separate start so the
 * recorder's own cost stays out of the timings). Every tree given runs in the
 * same rounds, alternating, so load from elsewhere hits them alike; a tree is
 * a folder with a built dist/server/cli.js and node_modules beside it.
 *
 *   node --import tsx bench/startup.ts [tree ...]     (default: this tree; ROUNDS=5)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureBuilt, freePort, median, root, sleep, table } from './lib';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const RECORDER = join(root, 'scripts/load-recorder.mjs');
const trees = process.argv.slice(2).map((t) => resolve(t));
if (!trees.length) {
  ensureBuilt();
  trees.push(root);
}
const cli = (tree: string) => join(tree, 'dist/server/cli.js');

/** Wall ms and peak RSS (MB, GNU time) of one `service version`. */
function version(tree: string): { ms: number; mb: number } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, cli(tree), 'version'], { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`service version exited ${r.status}: ${r.stderr}`);
  return { ms, mb: Number(r.stderr.trim().split('\n').pop()) / 1024 };
}

/** Module files one command loads (distinct paths the recorder saw). */
function recorded(file: string): string[] {
  return [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
}

/** Starts `serve` on a fresh data folder; waits for the first 200, then 5 s idle; returns its RSS (MB). */
async function idleServer(tree: string, recordTo?: string): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'filedock-startup-'));
  const port = await freePort();
  const proc = spawn(process.execPath, [cli(tree), 'serve'], {
    env: {
      ...process.env,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_LOG_LEVEL: 'warn',
      SERVICE_UPDATE_CHECK: '0',
      ...(recordTo ? { LOAD_RECORD_FILE: recordTo, NODE_OPTIONS: `--import ${RECORDER}` } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((r) => proc.once('exit', r));
  try {
    for (let i = 0; ; i++) {
      if (proc.exitCode !== null) throw new Error('service exited during start');
      if (i > 6000) throw new Error('service did not answer in 60 s');
      try {
        if ((await fetch(`http://127.0.0.1:${port}/api/capabilities`)).status === 200) break;
      } catch {
        /* not listening yet */
      }
      await sleep(10);
    }
    await sleep(5000);
    return Number(readFileSync(`/proc/${proc.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) / 1024;
  } finally {
    proc.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const runs = trees.map(() => ({ versionMs: [] as number[], versionMb: [] as number[], idleMb: [] as number[] }));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 ? [...trees.keys()].reverse() : [...trees.keys()];
  for (const k of order) {
    for (let i = 0; i < 2; i++) {
      const v = version(trees[k]);
      runs[k].versionMs.push(v.ms);
      runs[k].versionMb.push(v.mb);
    }
    runs[k].idleMb.push(await idleServer(trees[k]));
  }
}
const anchor = Array.from({ length: 2 * ROUNDS }, () => {
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', 'console.log(1)']);
  return performance.now() - t0;
});
const modules: Array<{ version: number; serve: number }> = [];
for (const tree of trees) {
  const dir = mkdtempSync(join(tmpdir(), 'filedock-loads-'));
  const v = spawnSync(process.execPath, [cli(tree), 'version'], {
    env: { ...process.env, LOAD_RECORD_FILE: join(dir, 'version'), NODE_OPTIONS: `--import ${RECORDER}` },
  });
  if (v.status !== 0) throw new Error('service version failed under the recorder');
  await idleServer(tree, join(dir, 'serve'));
  modules.push({ version: recorded(join(dir, 'version')).length, serve: recorded(join(dir, 'serve')).length });
  rmSync(dir, { recursive: true, force: true });
}
table(
  `lean start (${ROUNDS} alternating rounds; medians; bare \`node -e console.log(1)\` ${median(anchor).toFixed(0)} ms)`,
  trees.map((tree, k) => ({
    tree,
    'version ms': median(runs[k].versionMs).toFixed(0),
    'version peak RSS MB': median(runs[k].versionMb).toFixed(1),
    'version modules': modules[k].version,
    'idle RSS MB (5 s)': median(runs[k].idleMb).toFixed(1),
    'idle modules': modules[k].serve,
  })),
);
for (const [k, tree] of trees.entries()) {
  const ms = median(runs[k].versionMs),
    mb = median(runs[k].idleMb);
  console.log(`${tree}: version ≤ 500 ms → ${ms <= 500 ? 'PASS' : 'FAIL'}; idle RSS ≤ 120 MB → ${mb <= 120 ? 'PASS' : 'FAIL'}`);
}
