/**
 * Small files: GET /api/files/raw of a 4 KiB file with 32 connections (wrk,
 * one thread), against nginx (sendfile) and a plain Node static server
 * serving the same file, alternating rounds in one run, medians. Targets
 * (issue 38): >= 90 % of the plain Node server's req/s with a p99 within
 * 2 ms of its p99; RSS back within 30 MB of its pre-load level 30 s after the load.
 *
 * Also CPU µs per request of the service and the plain Node server (whole
 * process, and its main thread), from /proc: steadier than req/s when other
 * work shares the cores.
 *
 *   node --import tsx bench/small-files.ts   (BENCH_RUNS=3, BENCH_SECONDS=8, BENCH_SETTLE_S=30)
 *   BENCH_CPU_PROF=<dir> also records a V8 CPU profile of the service and prints its top functions.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  cpuTimes,
  ensureBuilt,
  latestMainProfile,
  mainThreadCpu,
  median,
  profileSummary,
  sleep,
  startNginx,
  startPlainNode,
  startService,
  table,
  wrk,
  type WrkResult,
} from './lib';
import { adminEnv, mount } from './download';
import { tempDir } from '../test/helpers/tools';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 30);
const PROF = process.env.BENCH_CPU_PROF;
const CONNS = 32;

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-small-');
  mkdirSync(join(files.dir, 'data'));
  writeFileSync(join(files.dir, 'data/small.bin'), randomBytes(4096));
  if (PROF) mkdirSync(PROF, { recursive: true });
  const svc = await startService(adminEnv, PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : []);
  const nginx = await startNginx(files.dir);
  const plain = await startPlainNode(files.dir);
  try {
    const token = await mount(svc, 'Bench', join(files.dir, 'data'));
    // [name, url, headers, pid whose CPU is counted (0: none)]
    const targets: Array<[string, string, Record<string, string>, number]> = [
      ...(nginx ? [['anchor: nginx sendfile', `${nginx.url}/data/small.bin`, {}, 0] as [string, string, Record<string, string>, number]] : []),
      ['anchor: plain Node static server', `${plain.url}/data/small.bin`, {}, plain.pid],
      ['service GET /api/files/raw', `${svc.url}/api/files/raw?path=/Bench/small.bin`, { authorization: `Bearer ${token}` }, svc.proc.pid!],
    ];
    for (const [, url, headers] of targets) {
      const r = await fetch(url, { headers });
      if (r.status !== 200 || (await r.arrayBuffer()).byteLength !== 4096) throw new Error(`${url}: ${r.status}`);
      await wrk(url, { connections: CONNS, seconds: 2, headers }); // warm-up (JIT, page cache)
    }
    await sleep(1000);
    const rssBefore = svc.rssMb();
    const results = new Map<string, Array<WrkResult & { cpuUs: number; mainUs: number }>>(targets.map(([n]) => [n, []]));
    const cpuOf = (pid: number) => (pid ? { all: cpuTimes(pid).user + cpuTimes(pid).sys, main: mainThreadCpu(pid) } : { all: NaN, main: NaN });
    for (let i = 0; i < RUNS; i++)
      for (const [name, url, headers, pid] of targets) {
        const before = cpuOf(pid);
        const r = await wrk(url, { connections: CONNS, seconds: SECONDS, headers });
        const after = cpuOf(pid);
        results.get(name)!.push({ ...r, cpuUs: ((after.all - before.all) * 1e6) / r.requests, mainUs: ((after.main - before.main) * 1e6) / r.requests });
      }
    const rssPeak = svc.rssMb();
    const rows = [...results].map(([name, rs]) => ({
      server: name,
      'req/s': median(rs.map((r) => r.rps)),
      'p50 ms': median(rs.map((r) => r.p50)),
      'p99 ms': median(rs.map((r) => r.p99)),
      'CPU µs/req': rs[0].cpuUs >= 0 ? median(rs.map((r) => r.cpuUs)).toFixed(0) : '',
      'main thread µs/req': rs[0].mainUs >= 0 ? median(rs.map((r) => r.mainUs)).toFixed(0) : '',
      errors: rs.reduce((a, r) => a + r.errors + r.non2xx, 0),
      runs: rs.map((r) => r.rps).join(' '),
    }));
    table(`4 KiB GET, ${CONNS} connections, wrk -t1, ${RUNS} alternating rounds of ${SECONDS} s (medians)`, rows);
    const ours = rows[rows.length - 1];
    const anchor = rows[rows.length - 2];
    const ratio = ours['req/s'] / anchor['req/s'];
    const p99Gap = ours['p99 ms'] - anchor['p99 ms'];
    console.log(
      `\nservice / plain Node: ${(ratio * 100).toFixed(0)} % (target >= 90 %) ${ratio >= 0.9 ? 'PASS' : 'FAIL'}; p99 ${ours['p99 ms']} ms vs ${anchor['p99 ms']} ms (target: within 2 ms) ${p99Gap <= 2 ? 'PASS' : 'FAIL'}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
    );
    await sleep(SETTLE_S * 1000);
    const rssAfter = svc.rssMb();
    console.log(
      `service RSS: ${rssBefore.toFixed(0)} MB before, ${rssPeak.toFixed(0)} MB at the end of the load, ${rssAfter.toFixed(0)} MB ${SETTLE_S} s later (target: within 30 MB of before) ${rssAfter - rssBefore <= 30 ? 'PASS' : 'FAIL'}`,
    );
  } finally {
    nginx?.stop();
    await plain.stop();
    await svc.stop();
    files.cleanup();
  }
  if (PROF) {
    const newest = latestMainProfile(PROF);
    if (newest) table(`CPU profile of the service (${newest}), self time`, profileSummary(newest, 25));
  }
}

await main();
