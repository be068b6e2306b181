/**
 * Issue 30's anchor: what a database on another machine costs one instance. The same service on SQLite,
 * on PostgreSQL next door, and on PostgreSQL behind a TCP proxy that holds every chunk for DELAY ms in
 * each direction (the shape of a database one network hop away). Per setup, 16 connections:
 *   raw     GET /api/files/raw of 4 KiB files (wrk), with a fresh-connection /api/capabilities probe
 *           every 20 ms meanwhile (a request that needs no database: it shows whether the loop waits)
 *   me      GET /api/auth/me
 *   page    a 100-row listing page at a random offset of a 2,000-entry folder
 * Targets (issue 30): 5 ms away, capabilities p99 <= 20 ms during `raw` and the raw rate >= 50 % of next
 * door; next door, raw and page >= 0.7x SQLite.
 *
 *   npm run bench -- pg-latency   (BENCH_SECONDS=8, BENCH_DELAY_MS=5, BENCH_SETUPS=sqlite,near,away)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { adminEnv, mount } from './download';
import { delayingProxy, ensureBuilt, pct, probe, startService, table, wrk } from './lib';
import { startPostgres } from '../test/helpers/postgres';
import { tempDir } from '../test/helpers/tools';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 5);
const SETUPS = (process.env.BENCH_SETUPS ?? 'sqlite,near,away').split(',');
const CONNS = 16;
const ENTRIES = 2000;

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-pglat-');
  for (let i = 0; i < 100; i++) writeFileSync(join(files.dir, `f${i}.bin`), Buffer.alloc(4096, i));
  mkdirSync(join(files.dir, 'big'));
  for (let i = 0; i < ENTRIES; i++) writeFileSync(join(files.dir, 'big', `e${String(i).padStart(5, '0')}.txt`), '');
  const cluster = SETUPS.some((s) => s !== 'sqlite') ? await startPostgres() : null;
  const rows: Array<Record<string, string | number>> = [];
  try {
    for (const setup of SETUPS) {
      let proxy: { port: number; close(): void } | null = null;
      const env: Record<string, string> = { ...adminEnv, SERVICE_HTTP_IDLE_TIMEOUT: '0' };
      if (setup !== 'sqlite') {
        const url = new URL(await cluster!.createDatabase(`bench_${setup}`));
        if (setup === 'away') {
          proxy = await delayingProxy(Number(url.port), DELAY_MS);
          url.port = String(proxy.port);
        }
        env.SERVICE_DATABASE_URL = url.toString();
      }
      const svc = await startService(env);
      try {
        const token = await mount(svc, 'Bench', files.dir);
        const headers = { authorization: `Bearer ${token}` };
        // The first listing waits for the storage's first sync to have reached the big folder.
        for (let i = 0; i < 600; i++) {
          const r = await fetch(`${svc.url}/api/files/manager?path=/Bench/big&limit=1`, { headers });
          const body = (await r.json()) as { total?: number };
          if (r.status === 200 && body.total === ENTRIES) break;
          await new Promise((res) => setTimeout(res, 100));
        }
        const raw = `
math.randomseed(os.time())
request = function() return wrk.format("GET", "/api/files/raw?path=/Bench/f" .. math.random(0, 99) .. ".bin") end`;
        const p = probe(svc.url, 20);
        const r1 = await wrk(svc.url + '/', { connections: CONNS, seconds: SECONDS, headers, script: raw, timeoutS: 30 });
        const caps = await p.stop();
        const r2 = await wrk(`${svc.url}/api/auth/me`, { connections: CONNS, seconds: SECONDS, headers, timeoutS: 30 });
        const page = `
math.randomseed(os.time())
request = function() return wrk.format("GET", "/api/files/manager?path=/Bench/big&limit=100&offset=" .. math.random(0, ${ENTRIES - 100})) end`;
        const r3 = await wrk(svc.url + '/', { connections: CONNS, seconds: SECONDS, headers, script: page, timeoutS: 30 });
        rows.push({
          setup: setup === 'away' ? `PostgreSQL ${DELAY_MS} ms away` : setup === 'near' ? 'PostgreSQL next door' : 'SQLite',
          '4 KiB raw req/s': r1.rps,
          'raw p99 ms': r1.p99,
          'caps p50 ms': pct(caps, 50).toFixed(1),
          'caps p99 ms': pct(caps, 99).toFixed(1),
          'me req/s': r2.rps,
          'page of 100 req/s': r3.rps,
          'page p99 ms': r3.p99,
          'errors/non-2xx': r1.errors + r1.non2xx + r2.errors + r2.non2xx + r3.errors + r3.non2xx,
          load: loadavg()[0].toFixed(1),
        });
      } finally {
        await svc.stop();
        proxy?.close();
      }
    }
  } finally {
    await cluster?.destroy();
    files.cleanup();
  }
  table(`One instance, ${CONNS} connections, ${SECONDS} s per workload; a fresh-connection /api/capabilities probe every 20 ms during the raw run`, rows);
}

await main();
