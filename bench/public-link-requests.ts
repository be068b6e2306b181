/**
 * The per-request cost of the link guard (`shares/link-guard.ts`): small-file
 * `GET /s/{token}` downloads at 8 connections for 10 s, by an internet
 * visitor (X-Forwarded-For from the trusted loopback proxy: the guard admits
 * and releases every request) against a LAN visitor of the same link (exempt:
 * the anchor, no guard), alternating runs, on SQLite and on PostgreSQL.
 *
 *   node --import tsx bench/public-link-requests.ts     (BENCH_RUNS=3, BENCH_SECONDS=10)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { adminEnv, mount } from './download';
import { cannon, ensureBuilt, median, startService, table } from './lib';
import { createLink } from './share-download';
import { tempDir } from '../test/helpers/tools';
import { startPostgres } from '../test/helpers/postgres';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 8;

async function measure(db: string, env: Record<string, string>): Promise<Array<Record<string, string | number>>> {
  const files = tempDir('filedock-bench-link-');
  const svc = await startService({ ...adminEnv, ...env });
  try {
    writeFileSync(join(files.dir, 'small.bin'), randomBytes(4096));
    const bearer = await mount(svc, 'Bench', files.dir);
    const link = await createLink(svc, bearer, { path: '/Bench/small.bin' });
    const url = `${svc.url}/s/${link.token}`;
    const runs = { lan: [] as Array<Awaited<ReturnType<typeof cannon>>>, internet: [] as Array<Awaited<ReturnType<typeof cannon>>> };
    const lan = async () => runs.lan.push(await cannon(url, { connections: CONNECTIONS, seconds: SECONDS }));
    const internet = async () =>
      runs.internet.push(await cannon(url, { connections: CONNECTIONS, seconds: SECONDS, headers: { 'x-forwarded-for': '203.0.113.7' } }));
    await cannon(url, { connections: CONNECTIONS, seconds: 2 }); // warm-up, untimed
    for (let i = 0; i < RUNS; i++) {
      if (i % 2) await internet(), await lan();
      else await lan(), await internet();
    }
    const row = (visitor: string, xs: typeof runs.lan) => ({
      db,
      visitor,
      'req/s (median)': median(xs.map((r) => r.rps)),
      'p50 ms': median(xs.map((r) => r.p50)),
      'p99 ms': median(xs.map((r) => r.p99)),
      'non-2xx': xs.reduce((n, r) => n + r.non2xx + r.errors, 0),
      runs: xs.map((r) => r.rps).join(' '),
    });
    return [row('LAN (exempt, anchor)', runs.lan), row('internet (guarded)', runs.internet)];
  } finally {
    await svc.stop();
    files.cleanup();
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const cluster = await startPostgres();
  try {
    const rows = [...(await measure('sqlite', {})), ...(await measure('postgres', { SERVICE_DATABASE_URL: await cluster.createDatabase('linkbench') }))];
    table(`Public link: 4 KiB GET /s/{token}, ${CONNECTIONS} connections, ${RUNS} alternating runs of ${SECONDS} s`, rows);
  } finally {
    await cluster.destroy();
  }
}

void main();
