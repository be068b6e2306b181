/**
 * Cost of the uplink budget when it is not the bottleneck: `GET /s/{token}`
 * of a large file by an internet visitor (X-Forwarded-For from the trusted
 * loopback proxy, so not exempt) with the budget off (no pacer at all) and
 * with a budget far above the line rate (100 Gbit/s: every chunk passes the
 * token bucket), switched through the admin setting between alternating runs
 * on one service. Target: under 5 % of throughput. Setup as share-download.ts.
 *
 *   node --import tsx bench/public-egress.ts     (BENCH_RUNS=5, BENCH_MIB=1024)
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { adminEnv, curl, mount } from './download';
import { ensureBuilt, median, noise, startService, table, type Service } from './lib';
import { createLink } from './share-download';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const BYTES = Number(process.env.BENCH_MIB ?? 1024) * MiB;
/** The highest budget the setting takes: far above any loopback line rate here. */
const FAR_ABOVE_MBPS = 100_000;

/** User + system CPU seconds of a process so far (/proc, 100 ticks a second). */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function setBudget(svc: Service, bearer: string, mbps: number): Promise<void> {
  const r = await fetch(`${svc.url}/api/admin/uplink`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ public_egress_mbps: mbps }),
  });
  if (r.status !== 200) throw new Error(`uplink: ${r.status} ${await r.text()}`);
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-egress-');
  const svc = await startService(adminEnv);
  try {
    await pipeline(noise(BYTES), createWriteStream(join(files.dir, 'big.bin')));
    const bearer = await mount(svc, 'Bench', files.dir);
    const link = await createLink(svc, bearer, { path: '/Bench/big.bin' });
    execFileSync('sh', ['-c', 'sync && cat "$1" > /dev/null', 'sh', join(files.dir, 'big.bin')]);
    const get = () => curl(['-H', 'x-forwarded-for: 203.0.113.7', `${svc.url}/s/${link.token}`]);
    get(); // untimed: memory reclaim after the big write
    const off: number[] = [];
    const on: number[] = [];
    // The service's own CPU seconds per run too: wall time on a shared 2-core machine swings with other load.
    const cpuOff: number[] = [];
    const cpuOn: number[] = [];
    const timed = (xs: number[], cpu: number[]) => {
      const c0 = cpuSeconds(svc.proc.pid!);
      xs.push(get());
      cpu.push(cpuSeconds(svc.proc.pid!) - c0);
    };
    // Which mode goes first alternates too, so neither always runs right after the other.
    const runOff = async () => (await setBudget(svc, bearer, 0), timed(off, cpuOff));
    const runOn = async () => (await setBudget(svc, bearer, FAR_ABOVE_MBPS), timed(on, cpuOn));
    for (let i = 0; i < RUNS; i++) {
      if (i % 2) await runOn(), await runOff();
      else await runOff(), await runOn();
    }
    await setBudget(svc, bearer, 0);
    const gbps = (s: number) => (BYTES / s / 1e9).toFixed(2);
    const row = (mode: string, xs: number[], cpu: number[]) => ({
      mode,
      'median s': median(xs).toFixed(2),
      'GB/s': gbps(median(xs)),
      'best s': Math.min(...xs).toFixed(2),
      'server CPU s (median)': median(cpu).toFixed(2),
      runs: xs.map((x) => x.toFixed(2)).join(' '),
    });
    table(`Public link download of ${BYTES / MiB} MiB by an internet visitor, ${RUNS} alternating runs (curl to /dev/null)`, [
      row('budget off (anchor)', off, cpuOff),
      row(`budget ${FAR_ABOVE_MBPS} Mbit/s`, on, cpuOn),
    ]);
    const cost = 1 - median(off) / median(on);
    const cpuCost = median(cpuOn) / median(cpuOff) - 1;
    console.log(
      `\nshaper cost: ${(cost * 100).toFixed(1)} % of throughput by median wall time, ${(cpuCost * 100).toFixed(1)} % more server CPU (target < 5 %) ${cost < 0.05 ? 'PASS' : 'FAIL'}`,
    );
  } finally {
    await svc.stop();
    files.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
