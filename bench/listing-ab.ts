/**
 * Two builds side by side on listing-random's saturating workloads (issue 38):
 * both services run at once, each on its own synced 10,000-entry folder, and
 * the workloads alternate between them round by round (A B, then B A), so load
 * from elsewhere on a shared machine hits both alike. Per run: listings/s, the
 * page p99, a fresh connection's /api/capabilities p99, the CPU per listing of
 * the service (process and main thread, from /proc) and of wrk (is the client
 * the bottleneck?). Each tree's dist/ must be built and sit inside this checkout
 * (node_modules resolve from there).
 *
 *   node --import tsx bench/listing-ab.ts <dist A> <dist B>   (ROUNDS=3, BENCH_SECONDS=8, AB_CONNS=200)
 *
 * On a loaded machine, fewer connections (AB_CONNS=8) keep both services below saturation, so the CPU per
 * listing says what a listing costs rather than how the machine shared its cores.
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { cpuTimes, mainThreadCpu, median, pct, probe, table, wrk } from './lib';
import { syncedFolder } from './listing';
import { randomPages } from './listing-random';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNS = Number(process.env.AB_CONNS ?? 200);
const BASE = '/api/files/manager?path=/Bench/big&limit=1000';
const WORKLOADS: Array<[string, string]> = [
  ['back to back, random offsets and sorts', randomPages(BASE, false, true)],
  [`paced 80 ms (${CONNS * 12.5}/s offered)`, randomPages(BASE, false, true, 80)],
];

async function main(): Promise<void> {
  const dists = process.argv.slice(2, 4).map((d) => resolve(d));
  if (dists.length !== 2) throw new Error('usage: listing-ab.ts <dist A> <dist B>');
  const services = [];
  for (const dist of dists) {
    process.env.BENCH_DIST = dist;
    services.push({ dist, ...(await syncedFolder(10_000)) });
  }
  const rows: Array<Record<string, string | number>> = [];
  const cpu: Record<string, number[]> = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [1, 0] : [0, 1];
      for (const [workload, script] of WORKLOADS)
        for (const i of order) {
          const { svc, auth } = services[i];
          const pid = svc.proc.pid!;
          const cpu0 = cpuTimes(pid);
          const main0 = mainThreadCpu(pid);
          const p = probe(svc.url);
          const r = await wrk(svc.url + '/', { connections: CONNS, seconds: SECONDS, headers: auth, script, timeoutS: 30 });
          const caps = await p.stop();
          const cpu1 = cpuTimes(pid);
          const us = (s: number) => (s * 1e6) / Math.max(1, r.requests);
          const total = us(cpu1.user + cpu1.sys - cpu0.user - cpu0.sys);
          (cpu[`${'AB'[i]} ${workload}`] ??= []).push(total);
          rows.push({
            build: 'AB'[i],
            round: round + 1,
            workload,
            'listings/s': r.rps,
            'p99 ms': r.p99,
            'capabilities p99 ms': pct(caps, 99).toFixed(1),
            'CPU µs/listing (main)': `${total.toFixed(0)} (${us(mainThreadCpu(pid) - main0).toFixed(0)})`,
            'wrk CPU %': ((r.cpuS / SECONDS) * 100).toFixed(0),
            errors: r.errors + r.non2xx,
            load: loadavg()[0].toFixed(1),
          });
        }
    }
  } finally {
    for (const s of services) await s.cleanup();
  }
  table(`A = ${dists[0]}, B = ${dists[1]}; ${CONNS} connections, ${SECONDS} s a run`, rows);
  table(
    'median CPU per listing (µs, whole process)',
    Object.entries(cpu).map(([k, v]) => ({ run: k, median: median(v).toFixed(0), all: v.map((x) => x.toFixed(0)).join(' / ') })),
  );
}

await main();
