/**
 * Replication to an SFTP target (a loopback OpenSSH, `internal-sftp`) against
 * `rclone copy` to the same sshd with the same key, in the same run:
 *   a. lag: 1,000 small files written through the API (4 at a time) until
 *      every copy is on the target, vs `rclone copy` of the same files
 *      (target: ≤ 2 × rclone);
 *   b. one big file (2 GiB; BENCH_MIB to shrink): from the upload's answer
 *      until the copy is complete on the target, vs `rclone copy` of it
 *      (target: ≥ 80 % of rclone's speed);
 *   c. the primary's write latency (p50/p99 of sequential 4 KiB saves) on a
 *      storage linked to the async target vs one that is not (target: within
 *      5 %): single writes alternating ABBA (both sides see the same copies
 *      running), with the median of the paired differences;
 *   d. the decorator's own synchronous cost per write in µs, in process
 *      (bench/replication-decorator.ts).
 *
 *   npm run bench -- replication     (BENCH_RUNS=3, BENCH_FILES=1000, BENCH_MIB=2048, BENCH_WRITES=1000,
 *                                     BENCH_PARTS=lag,big,latency,decorator)
 *   BENCH_DATA_DIR=<dir> keeps the service's data dir (the ops table times every copy).
 *   BENCH_CPU_PROF=<dir> also records a V8 CPU profile of the service and prints its top functions.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, latestMainProfile, median, monotonicUs, noise, profileSummary, sleep, startService, table, type Service } from './lib';
import { adminEnv, mount } from './download';
import { decoratorCost } from './replication-decorator';
import { startSshd, type SshdServer } from '../test/helpers/sshd';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const FILES = Number(process.env.BENCH_FILES ?? 1000);
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;
const WRITES = Number(process.env.BENCH_WRITES ?? 1000);
const SMALL = 4096;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'lag,big,latency,decorator').split(','));
const PROF = process.env.BENCH_CPU_PROF;
/** When the big copies ran (µs, monotonic): the profile is also summarised for them alone. */
const copyWindows: Array<[number, number]> = [];

type Api = (method: string, path: string, body?: unknown) => Promise<any>;

function client(svc: Service, token: string): Api {
  return async (method, path, body) => {
    const r = await fetch(svc.url + path, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.status === 204 ? null : r.json();
  };
}

/** `rclone copy src bench:dst` over SFTP with the sshd's client key (configured by env, no config file); seconds. */
function rcloneCopy(sshd: SshdServer, src: string, dst: string): number {
  const t0 = performance.now();
  execFileSync('rclone', ['copy', src, `bench:${dst}`, '--sftp-disable-hashcheck', '--log-level', 'ERROR'], {
    env: {
      ...process.env,
      RCLONE_CONFIG: '/dev/null',
      RCLONE_CONFIG_BENCH_TYPE: 'sftp',
      RCLONE_CONFIG_BENCH_HOST: sshd.host,
      RCLONE_CONFIG_BENCH_PORT: String(sshd.port),
      RCLONE_CONFIG_BENCH_USER: sshd.user,
      RCLONE_CONFIG_BENCH_KEY_FILE: sshd.clientKeyPath,
      RCLONE_CONFIG_BENCH_SHELL_TYPE: 'none',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return (performance.now() - t0) / 1000;
}

const count = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')).length : 0);

async function waitFor(what: string, ok: () => boolean, ms = 600_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(20);
  }
}

/** Runs `fn(i)` for 0..n-1, `width` at a time. */
async function pool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
const cpuOf = (pid: number) =>
  readFileSync(`/proc/${pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ')
    .slice(11, 13)
    .reduce((a, x) => a + Number(x), 0) / 100;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function main(): Promise<void> {
  ensureBuilt();
  const work = tempDir('filedock-bench-repl-');
  const sshd = await startSshd();
  if (PROF) mkdirSync(PROF, { recursive: true });
  // BENCH_DATA_DIR keeps the service's data dir (its ops table holds each copy's timestamps) for a look afterwards.
  const keep: Record<string, string> = process.env.BENCH_DATA_DIR ? { SERVICE_DATA_DIR: process.env.BENCH_DATA_DIR } : {};
  const svc = await startService({ ...adminEnv, SERVICE_REPLICA_RETRY_BACKOFF: '1s', ...keep }, PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : []);
  try {
    const primary = join(work.dir, 'primary');
    const plain = join(work.dir, 'plain');
    mkdirSync(primary);
    mkdirSync(plain);
    const token = await mount(svc, 'home', primary);
    const api = client(svc, token);
    await api('POST', '/api/admin/storages', { name: 'plain', driver: 'local', config: { path: plain } });
    const targetRoot = join(sshd.dataDir, 'replica');
    mkdirSync(targetRoot);
    const target = await api('POST', '/api/admin/replication-targets', {
      name: 'sftp',
      driver: 'sftp',
      config: { host: sshd.host, port: sshd.port, user: sshd.user, private_key: sshd.clientKey, root: targetRoot },
    });
    const storages = (await api('GET', '/api/admin/storages')).storages as { id: number; name: string }[];
    await api('PATCH', `/api/admin/storages/${storages.find((s) => s.name === 'home')!.id}`, { replica_target_id: target.id });

    // The same small files on disk for rclone.
    const smallSrc = join(work.dir, 'small-src');
    mkdirSync(smallSrc);
    const body = 'x'.repeat(SMALL);
    for (let i = 0; i < FILES; i++) writeFileSync(join(smallSrc, `f${i}.txt`), body);

    const lag = { total: [] as number[], drain: [] as number[], rclone: [] as number[], cpu: [] as number[] };
    const big = { ours: [] as number[], wait: [] as number[], rclone: [] as number[] };
    for (let run = 0; run < RUNS && (PARTS.has('lag') || PARTS.has('big')); run++) {
      // a. 1,000 small files.
      if (PARTS.has('lag')) {
        await api('POST', '/api/files/mkdir', { path: `/home/small${run}` });
        const dest = join(targetRoot, `small${run}`);
        const t0 = performance.now();
        await pool(FILES, 4, (i) => api('POST', '/api/files/save-text', { path: `/home/small${run}/f${i}.txt`, content: body }));
        const tWritten = performance.now();
        const cpuW = cpuOf(svc.proc.pid!);
        await waitFor('every small copy', () => count(dest) >= FILES);
        const tAll = performance.now();
        lag.cpu.push(cpuOf(svc.proc.pid!) - cpuW);
        lag.total.push((tAll - t0) / 1000);
        lag.drain.push((tAll - tWritten) / 1000);
        lag.rclone.push(rcloneCopy(sshd, smallSrc, join(sshd.dataDir, `rclone-small${run}`)));
      }
      if (!PARTS.has('big')) continue;

      // b. one big file; rclone goes before ours in even runs and after it in odd ones (the load drifts).
      // Each side starts with the disk's dirty pages flushed (`sync`): else the second copy runs under the
      // kernel's writeback of the first's 2 GiB and the order decides the ratio (0.5x-1.8x on a quiet machine).
      // Ours still carries the writeback of its own upload, which the copy follows at once.
      const src = join(work.dir, `big${run}.bin`);
      await pipeline(noise(BYTES), createWriteStream(src));
      const rdir = join(sshd.dataDir, `rclone-big${run}`);
      execFileSync('sync');
      if (run % 2 === 0) big.rclone.push(rcloneCopy(sshd, src, rdir));
      execFileSync('sync');
      // curl, not fetch: when the server answers before the body is in, curl still shows that answer.
      const up = execFileSync(
        'curl',
        [
          '-sS',
          '-o',
          '-',
          '-w',
          '\n%{http_code}',
          '-H',
          `authorization: Bearer ${token}`,
          '-F',
          'path=/home',
          '-F',
          `file=@${src}`,
          `${svc.url}/api/files/upload`,
        ],
        { encoding: 'utf8' },
      );
      if (!up.endsWith('\n200')) throw new Error(`upload: ${up}`);
      const b0 = performance.now();
      const w0 = monotonicUs();
      const copy = join(targetRoot, `big${run}.bin`);
      // The copy streams into a temp file beside its final name: its appearance is when the job started.
      let started = 0;
      await waitFor('the big copy', () => {
        if (!started && readdirSync(targetRoot).some((n) => n.startsWith('.~fd-'))) started = performance.now();
        return existsSync(copy) && statSync(copy).size === BYTES;
      });
      big.ours.push((performance.now() - b0) / 1000);
      copyWindows.push([w0, monotonicUs()]);
      big.wait.push(((started || performance.now()) - b0) / 1000);
      execFileSync('sync');
      if (run % 2 === 1) big.rclone.push(rcloneCopy(sshd, src, rdir));
      execFileSync('rm', ['-rf', src, copy, rdir, join(primary, `big${run}.bin`)]);
    }

    // c. write latency, linked vs not: single writes alternating in ABBA order (on/off, then off/on), so neither side
    // always follows the other; both see the same background copies. Paired by round: the median of the differences.
    const lat = { on: [] as number[], off: [] as number[] };
    const save = async (into: number[], path: string) => {
      const t = performance.now();
      await api('POST', '/api/files/save-text', { path, content: body });
      into.push(performance.now() - t);
    };
    if (PARTS.has('latency')) {
      for (const d of ['/home/lat', '/plain/lat']) await api('POST', '/api/files/mkdir', { path: d });
      for (let j = 0; j < 20; j++) await save([], `/plain/lat/warm${j}.txt`); // JIT and caches warm for both sides
      for (let j = 0; j < WRITES; j++) {
        if (j % 2 === 0) {
          await save(lat.on, `/home/lat/w${j}.txt`);
          await save(lat.off, `/plain/lat/w${j}.txt`);
        } else {
          await save(lat.off, `/plain/lat/w${j}.txt`);
          await save(lat.on, `/home/lat/w${j}.txt`);
        }
      }
      await waitFor('the latency copies', () => count(join(targetRoot, 'lat')) >= WRITES);
    }

    const s = (xs: number[]) => `${median(xs).toFixed(2)} s`;
    const runs = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
    if (PARTS.has('lag'))
      table(`Replication lag: ${FILES} files of ${SMALL / 1024} KiB to SFTP (median of ${RUNS})`, [
        {
          what: 'Filedock: first API write → every copy on the target',
          time: s(lag.total),
          'vs rclone': `${(median(lag.total) / median(lag.rclone)).toFixed(2)}×`,
          runs: runs(lag.total),
        },
        {
          what: 'Filedock: last write answered → every copy on the target',
          time: s(lag.drain),
          'vs rclone': `${(median(lag.drain) / median(lag.rclone)).toFixed(2)}×`,
          runs: runs(lag.drain),
        },
        { what: 'rclone copy (same files, same sshd)', time: s(lag.rclone), 'vs rclone': '1.00×', runs: runs(lag.rclone) },
        { what: "the service's CPU seconds during the drain (each run should cost the same)", time: s(lag.cpu), 'vs rclone': '', runs: runs(lag.cpu) },
      ]);
    const mbps = (xs: number[]) => BYTES / MiB / median(xs);
    if (PARTS.has('big'))
      table(`Replication of one ${BYTES / MiB} MiB file to SFTP (median of ${RUNS})`, [
        {
          what: 'Filedock: upload answered → copy complete',
          time: s(big.ours),
          'MiB/s': mbps(big.ours).toFixed(0),
          'vs rclone': `${((mbps(big.ours) / mbps(big.rclone)) * 100).toFixed(0)} %`,
          runs: runs(big.ours),
        },
        { what: '  of which: upload answered → copy started', time: s(big.wait), 'MiB/s': '', 'vs rclone': '', runs: runs(big.wait) },
        { what: 'rclone copy', time: s(big.rclone), 'MiB/s': mbps(big.rclone).toFixed(0), 'vs rclone': '100 %', runs: runs(big.rclone) },
      ]);
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    const vs = (p: number) => `${((pct(lat.on, p) / pct(lat.off, p) - 1) * 100).toFixed(1)} %`;
    const diffs = lat.on.map((x, i) => x - lat.off[i]);
    if (PARTS.has('latency'))
      table(`Primary write latency, ${WRITES} sequential 4 KiB saves each side, alternating ABBA`, [
        { side: 'on (linked to the async SFTP target)', p50: ms(pct(lat.on, 0.5)), p99: ms(pct(lat.on, 0.99)), 'p50 vs off': vs(0.5), 'p99 vs off': vs(0.99) },
        { side: 'off (a storage with no target)', p50: ms(pct(lat.off, 0.5)), p99: ms(pct(lat.off, 0.99)), 'p50 vs off': '0 %', 'p99 vs off': '0 %' },
        {
          side: 'paired: median of (on − off) per round',
          p50: ms(pct(diffs, 0.5)),
          p99: '',
          'p50 vs off': `${((pct(diffs, 0.5) / pct(lat.off, 0.5)) * 100).toFixed(1)} %`,
          'p99 vs off': '',
        },
      ]);
    if (PARTS.has('decorator')) table("Replication's synchronous cost per primary write, in process (bench/replication-decorator.ts)", await decoratorCost());
  } finally {
    await svc.stop();
    await sshd.dispose();
    work.cleanup();
  }
  if (PROF) {
    const newest = latestMainProfile(PROF);
    if (newest) table(`CPU profile of the service (${newest}), self time`, profileSummary(newest, 25));
    if (newest && copyWindows.length)
      table('The same profile while the big copies ran (upload answered → copy complete)', profileSummary(newest, 25, copyWindows));
  }
}

await main();
