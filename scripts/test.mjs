// Runs every *.test.ts (unit tests beside the code, suites under test/) with
// Node's own test runner, from the compiled tree (scripts/test-compile.mjs brings it up to date first;
// TEST_TSX=1 runs the sources through tsx instead). Arguments filter files by substring of the source path:
//   npm test -- server/auth test/drivers
// A whole run (no filter) on CI, or with TEST_BOTH_DATABASES=1, then runs on
// PostgreSQL (TEST_DATABASE=postgres) what needs it: the repository suites, the
// `*.pg.test.ts` files and the suites in scripts/test-phases.mjs; with
// TEST_POSTGRES_ALL=1 every server suite (docs/postgresql.md, "Suites on PostgreSQL").
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { isPostgresOnly, postgresPhase } from './test-phases.mjs';
import { compileTests } from './test-compile.mjs';
import { compiledPath, OUT } from './test-tree.mjs';

const roots = ['server', 'electron', 'test', 'renderer/src', 'bench'];
const files = [];
const walk = (dir) => {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (n === 'node_modules' || n === 'dist') continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walk(p);
    else if (/\.test\.tsx?$/.test(n)) files.push(p);
  }
};
roots.forEach(walk);
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const selected = files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
/** The newest modification time of a file under `dir` (0 for none). */
const newest = (dir) => {
  let t = 0;
  for (const d of readdirSync(dir, { recursive: true, withFileTypes: true })) if (d.isFile()) t = Math.max(t, statSync(join(d.parentPath, d.name)).mtimeMs);
  return t;
};
/**
 * Child servers and CLI runs start from the build (TEST_BUILT=1, test/helpers/child-server.ts) when it is newer
 * than every server source and package.json: CI builds first. Else from the sources through tsx. TEST_BUILT=0|1 decides.
 */
const stamp = 'dist/.build-stamp';
const built =
  process.env.TEST_BUILT ?? (existsSync(stamp) && statSync(stamp).mtimeMs >= Math.max(newest('server'), statSync('package.json').mtimeMs) ? '1' : '0');
console.log(`# child servers and the CLI run from ${built === '1' ? 'the build (dist/server/cli.js)' : 'the sources (no fresh build in dist/)'}`);
/**
 * Plain Node on the compiled tree (docs/testing.md, "Compiled test tree"): tsx's loader hooks cost each test
 * file ~1.5 s of CPU. Source maps make stack traces name the .ts files. TEST_TSX=1: the sources through tsx.
 */
const compiled = process.env.TEST_TSX !== '1';
if (compiled) {
  const c = await compileTests();
  console.log(`# test files run from ${OUT}/ (${c.compiled} of ${c.files} files transpiled in ${c.ms} ms; TEST_TSX=1 runs the sources through tsx)`);
}
const loader = compiled ? ['--enable-source-maps'] : ['--import', 'tsx'];
/** Fails a file that runs too long or does not exit after its tests, listing what it left open. */
const WATCHDOG = new URL('./test-watchdog.mjs', import.meta.url).href;
/** Runs a list of files in the order given (`node --test` would sort them by name). */
const FILES = fileURLToPath(new URL('./test-files.mjs', import.meta.url));
/**
 * The files of a phase, the slowest first, so that the long suites start at once and the short ones fill the
 * gaps at the end instead of one long suite running alone at the end. A file's time comes from this machine's
 * last run (test-timings.json) or else from test/suite-times.json (a CI run's times of the files over 5 s,
 * refreshed with `npm run test:times`); a file in neither counts 5 s.
 */
function slowestFirst(list, phase) {
  const known = new Map();
  const read = (path, rows) => {
    if (!existsSync(path)) return;
    try {
      for (const r of rows(JSON.parse(readFileSync(path, 'utf8')))) if (r.phase === phase) known.set(r.file, r.ms);
    } catch {
      /* a broken timing file only loses the order */
    }
  };
  read('test/suite-times.json', (j) => Object.entries(j[phase] ?? {}).map(([file, s]) => ({ phase, file, ms: s * 1000 })));
  read('test-timings.json', (j) => j.files);
  const ms = (f) => known.get(f) ?? 5000;
  return [...list].sort((a, b) => ms(b) - ms(a) || a.localeCompare(b));
}
/** Each file's process appends its wall time here (scripts/test-timing.mjs); summed up in test-timings.json. */
const TIMING = new URL('./test-timing.mjs', import.meta.url).href;
const timingDir = mkdtempSync(join(tmpdir(), 'filedock-timings-'));
/**
 * One `node --test` run, its output passed through as it comes. The spec reporter ends a run with a
 * "failing tests:" section (each failure with its error); that section is kept and, when a whole run
 * (both databases) ends, printed again last: a CI log's tail then names every failure with its cause.
 */
const failures = [];
const run = (list, label, env = {}) =>
  new Promise((resolve) => {
    const c = spawn(
      process.execPath,
      [
        ...loader,
        '--import',
        WATCHDOG,
        '--import',
        TIMING,
        FILES,
        `--concurrency=${concurrency}`,
        ...flags,
        ...slowestFirst(list, label).map((f) => (compiled ? compiledPath(f) : f)),
      ],
      {
        stdio: ['inherit', 'pipe', 'inherit'],
        // Password cost 14 (the lowest the config takes) unless asked otherwise: every test server hashes its
        // admin's password at start and at each sign-in, 17's ~0.7 s per hash would add minutes and time out
        // throttle windows, 15's ~0.2 s still ~1 s of CPU per file; passwords.test.ts checks 17.
        env: {
          SERVICE_PASSWORD_COST: '14',
          ...process.env,
          NODE_ENV: 'test',
          TEST_BUILT: built,
          TEST_COMPILED: compiled ? '1' : '0',
          TEST_TIMINGS_FILE: join(timingDir, `${label}.jsonl`),
          ...env,
        },
      },
    );
    let tail = '';
    c.stdout.on('data', (d) => {
      process.stdout.write(d);
      tail = (tail + d.toString()).slice(-400_000);
    });
    c.on('close', (code) => {
      const at = tail.lastIndexOf('failing tests:');
      const lines = tail
        .slice(at)
        .split('\n')
        .filter((l) => !/^\s+at .*\(?node:/.test(l));
      if (at >= 0) failures.push(`# ${label}: ${lines.slice(0, 300).join('\n')}`);
      resolve(code ?? 1);
    });
  });

const both =
  filters.length === 0 &&
  process.env.TEST_DATABASE !== 'postgres' &&
  (process.env.CI === 'true' || process.env.CI === '1' || process.env.TEST_BOTH_DATABASES === '1');
/**
 * Writes every file's wall and CPU time of this run to test-timings.json (gitignored), prints the ten slowest
 * and each phase's sums: where the run's time goes, and whether the cores or the waits bound it.
 */
function recordTimings() {
  const rows = [];
  for (const label of ['SQLite', 'PostgreSQL']) {
    const f = join(timingDir, `${label}.jsonl`);
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, 'utf8').split('\n').filter(Boolean)) rows.push({ phase: label, ...JSON.parse(line) });
  }
  rmSync(timingDir, { recursive: true, force: true });
  if (rows.length === 0) return;
  rows.sort((a, b) => b.ms - a.ms);
  writeFileSync('test-timings.json', `${JSON.stringify({ at: new Date().toISOString(), files: rows }, null, 1)}\n`);
  const s = (ms) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
  console.log(`\n# The ten slowest test files (of ${rows.length}; all in test-timings.json):`);
  for (const r of rows.slice(0, 10)) console.log(`#${s(r.ms)}  ${r.phase === 'SQLite' ? '' : `[${r.phase}] `}${r.file}${r.ok ? '' : ' (failed)'}`);
  for (const phase of new Set(rows.map((r) => r.phase))) {
    const of = rows.filter((r) => r.phase === phase);
    const sum = (k) => of.reduce((t, r) => t + (r[k] ?? 0), 0);
    console.log(`# ${phase}: ${of.length} files, ${s(sum('ms')).trim()} of file wall time, ${s(sum('cpuMs')).trim()} of CPU`);
  }
}

/**
 * The PostgreSQL phase's one cluster with a migrated template (scripts/test-postgres.ts), handed to the
 * test files as TEST_PG_URL / TEST_PG_TEMPLATE (test/helpers/server.ts copies the template per server).
 * It stops when `stop()` closes its stdin, or when this process ends however it ends (the pipe closes).
 * Suites that stop, hang or kill a cluster start their own (startPostgres) and are not affected.
 * TEST_PG_SHARED=0: a cluster per test file, as before. If it cannot start, the files start their own.
 */
async function sharedPostgres() {
  if (process.env.TEST_PG_SHARED === '0') return { env: {}, stop: async () => {} };
  const script = compiled ? compiledPath('scripts/test-postgres.ts') : 'scripts/test-postgres.ts';
  const c = spawn(process.execPath, [...loader, script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((r) => c.once('exit', r));
  const stop = async () => {
    c.stdin.end();
    await exited;
  };
  try {
    const line = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error('not ready within 180 s')), 180_000);
      c.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(out.slice(0, out.indexOf('\n')));
        }
      });
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code}`));
      });
    });
    const info = JSON.parse(line);
    console.log(`# PostgreSQL: one cluster for the run (started in ${info.start_ms} ms, template migrated in ${info.migrate_ms} ms)`);
    return { env: { TEST_PG_URL: info.url, TEST_PG_TEMPLATE: info.template }, stop };
  } catch (e) {
    console.log(`# PostgreSQL: the shared cluster did not start (${e.message}); each test file starts its own`);
    c.kill('SIGKILL');
    return { env: {}, stop: async () => {} };
  }
}

/** `run` on PostgreSQL, on the run's one cluster, stopped afterwards whatever happened. */
async function runOnPostgres(list) {
  const pgShared = await sharedPostgres();
  try {
    return await run(list, 'PostgreSQL', { TEST_DATABASE: 'postgres', ...pgShared.env });
  } finally {
    await pgShared.stop();
  }
}

const onPostgres = both ? postgresPhase(selected, process.env.TEST_POSTGRES_ALL === '1') : [];
// In a whole run the PostgreSQL-only files run once, in the PostgreSQL phase.
const onSqlite = both ? selected.filter((f) => !isPostgresOnly(f)) : selected;
const first = process.env.TEST_DATABASE === 'postgres' ? await runOnPostgres(selected) : await run(onSqlite, 'SQLite');
if (!both) {
  recordTimings();
  process.exit(first);
}
console.log(
  `\n# ${onPostgres.length} suites on PostgreSQL (TEST_DATABASE=postgres): ${
    process.env.TEST_POSTGRES_ALL === '1' ? 'every server suite (TEST_POSTGRES_ALL=1)' : 'repository suites, *.pg.test.ts, POSTGRES_SUITES'
  }\n`,
);
const second = await runOnPostgres(onPostgres);
recordTimings();
if (failures.length) console.log(`\n# The failures of this run again, with their errors:\n${failures.join('\n')}`);
process.exit(first || second);
