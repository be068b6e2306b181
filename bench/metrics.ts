/**
 * What GET /metrics's request counting costs the hottest path: GET
 * /api/files/raw of a 4 KiB file with 32 connections (wrk, one thread), with
 * metrics off and on in alternating rounds on one service (switched through
 * the admin API between rounds), medians. Target: on within 5 % of off. Also
 * the service's RSS before and after switching metrics on (prom-client is
 * loaded only then), the time of one scrape, and the recorder's own CPU time
 * per request in this process (a steady figure when the machine is too busy
 * for the A/B rounds to agree).
 *
 *   npm run bench -- metrics   (BENCH_RUNS=5, BENCH_SECONDS=8)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { HttpRecorder } from '../server/http/metrics/http-recorder';
import { ensureBuilt, median, sleep, startService, table, wrk, type WrkResult } from './lib';
import { adminEnv, mount } from './download';
import { tempDir } from '../test/helpers/tools';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNS = 32;

/** CPU µs per request of HttpRecorder (start + close) on a stand-in request of the raw route, median of 3 × 200,000. */
function recorderCpu(): number {
  const rec = new HttpRecorder([new Registry()]);
  const socket = { bytesRead: 0, bytesWritten: 0 };
  const matched = [{ path: '/api/files/raw', methods: ['HEAD', 'GET'] }];
  const round = (n: number) => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const res = Object.assign(new EventEmitter(), { statusCode: 200 });
      socket.bytesRead += 200;
      socket.bytesWritten += 4400;
      rec.start({ method: 'GET', path: '/api/files/raw', matched, res, req: { socket }, state: { door: 'files' } } as never);
      res.emit('close');
    }
    const u = process.cpuUsage(t0);
    return (u.user + u.system) / n;
  };
  round(50_000); // JIT
  return median([round(200_000), round(200_000), round(200_000)]);
}

async function main(): Promise<void> {
  console.log(`recorder CPU per request: ${recorderCpu().toFixed(2)} µs`);
  ensureBuilt();
  const files = tempDir('filedock-bench-metrics-');
  mkdirSync(join(files.dir, 'data'));
  writeFileSync(join(files.dir, 'data/small.bin'), randomBytes(4096));
  const svc = await startService(adminEnv);
  try {
    const token = await mount(svc, 'Bench', join(files.dir, 'data'));
    const admin = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const url = `${svc.url}/api/files/raw?path=/Bench/small.bin`;
    const headers = { authorization: `Bearer ${token}` };
    const setMetrics = async (enabled: boolean) => {
      const r = await fetch(`${svc.url}/api/admin/metrics`, { method: 'PATCH', headers: admin, body: JSON.stringify({ enabled }) });
      if (r.status !== 200) throw new Error(`PATCH /api/admin/metrics: ${r.status} ${await r.text()}`);
    };
    await wrk(url, { connections: CONNS, seconds: 2, headers }); // warm-up (JIT, page cache)
    await sleep(1000);
    const rssOff = svc.rssMb();
    await setMetrics(true);
    await wrk(url, { connections: CONNS, seconds: 2, headers }); // the recording path warmed too
    await sleep(1000);
    const rssOn = svc.rssMb();
    const results = new Map<string, WrkResult[]>([
      ['metrics off', []],
      ['metrics on', []],
    ]);
    for (let i = 0; i < RUNS; i++) {
      for (const on of [false, true]) {
        await setMetrics(on);
        results.get(on ? 'metrics on' : 'metrics off')!.push(await wrk(url, { connections: CONNS, seconds: SECONDS, headers }));
      }
    }
    const rows = [...results].map(([name, rs]) => ({
      service: name,
      'req/s': median(rs.map((r) => r.rps)),
      'p50 ms': median(rs.map((r) => r.p50)),
      'p99 ms': median(rs.map((r) => r.p99)),
      errors: rs.reduce((a, r) => a + r.errors + r.non2xx, 0),
      runs: rs.map((r) => r.rps).join(' '),
    }));
    table(`4 KiB GET /api/files/raw, ${CONNS} connections, wrk -t1, ${RUNS} alternating rounds of ${SECONDS} s (medians)`, rows);
    const ratio = rows[1]['req/s'] / rows[0]['req/s'];
    console.log(`\nmetrics on / off: ${(ratio * 100).toFixed(1)} % (target >= 95 %) ${ratio >= 0.95 ? 'PASS' : 'FAIL'}`);
    console.log(`service RSS: ${rssOff.toFixed(0)} MB with metrics off, ${rssOn.toFixed(0)} MB after switching them on`);
    const mtoken = ((await (await fetch(`${svc.url}/api/admin/metrics/token`, { headers })).json()) as { token: string }).token;
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const r = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${mtoken}` } });
      await r.text();
      times.push(performance.now() - t0);
    }
    console.log(`one scrape: ${median(times).toFixed(1)} ms (median of 20)`);
  } finally {
    await svc.stop();
    files.cleanup();
  }
}

await main();
