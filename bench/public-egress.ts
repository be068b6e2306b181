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
import { createWriteStream } from 'node:fs';
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

async function setBudget(svc: Service, bearer: string, mbps: number): Promise<void> {
  const r = await fetch(`${svc.url}/api/admin/uplink`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: JSON.stringify({ public_egress_mbps: mbps }) });
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
    for (let i = 0; i < RUNS; i++) {
      await setBudget(svc, bearer, 0);
      off.push(get());
      await setBudget(svc, bearer, FAR_ABOVE_MBPS);
      on.push(get());
    }
    await setBudget(svc, bearer, 0);
    const gbps = (s: number) => (BYTES / s / 1e9).toFixed(2);
    const row = (mode: string, xs: number[]) => ({ mode, 'median s': median(xs).toFixed(2), 'GB/s': gbps(median(xs)), runs: xs.map((x) => x.toFixed(2)).join(' ') });
    table(`Public link download of ${BYTES / MiB} MiB by an internet visitor, ${RUNS} alternating runs (curl to /dev/null)`, [
      row('budget off (anchor)', off),
      row(`budget ${FAR_ABOVE_MBPS} Mbit/s`, on),
    ]);
    const cost = 1 - median(off) / median(on);
    console.log(`\nshaper cost: ${(cost * 100).toFixed(1)} % of throughput (target < 5 %) ${cost < 0.05 ? 'PASS' : 'FAIL'}`);
  } finally {
    await svc.stop();
    files.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
