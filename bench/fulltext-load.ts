/**
 * Listing and upload rates while text extraction runs in the background (issue 34: unchanged within 5 %).
 * One server (in this process): storage `Bench` holds a 2,000-entry folder (listed: 100-row pages at random
 * offsets, wrk, 8 connections) and receives uploads (64 KiB `.bin` files, not themselves extracted, 4 at a
 * time); storage `Docs` holds the corpus's PDFs and office files (test/helpers/documents.ts) waiting for
 * extraction. Alternating in the same run: `idle` (background work paused, as the user's pause does: no
 * extraction starts) and `indexing` (extraction running under the governor's default budget), medians.
 *
 *   npm run bench -- fulltext-load    (BENCH_RUNS=3 BENCH_SECONDS=10 BENCH_PDFS=1000 BENCH_OFFICE=1000)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { TextExtractsRepo } from '../server/catalogue';
import { DEFAULT_TENANT } from '../server/db';
import { cachedCorpus } from '../test/helpers/documents';
import { startTestServer, type TestServer } from '../test/helpers/server';
import { tempDir } from '../test/helpers/tools';
import { median, sleep, table, wrk } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const N = { pdfs: Number(process.env.BENCH_PDFS ?? 1000), office: Number(process.env.BENCH_OFFICE ?? 1000), scans: 0 };
const ENTRIES = 2000;
const load = () => loadavg()[0].toFixed(2);

async function addStorage(s: TestServer, token: string, name: string, path: string): Promise<void> {
  const st = await s.api('POST', '/api/admin/storages', { token, body: { rbac_enabled: false, name, driver: 'local', config: { path }, sync_mode: 'poll' } });
  if (st.status !== 200) throw new Error(JSON.stringify(st.body));
}

/** Uploads per second over `seconds`, 4 at a time. */
async function uploads(s: TestServer, token: string, seconds: number, tag: string): Promise<number> {
  const body = new Uint8Array(64 * 1024).fill(7);
  const until = performance.now() + seconds * 1000;
  let n = 0;
  const client = async (c: number) => {
    for (let i = 0; performance.now() < until; i++) {
      const form = new FormData();
      form.append('path', '/Bench/up');
      form.append('file', new Blob([body]), `${tag}-${c}-${i}.bin`);
      const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
      if (r.status !== 200) throw new Error(`upload: ${r.status} ${await r.text()}`);
      n++;
    }
  };
  const started = performance.now();
  await Promise.all([0, 1, 2, 3].map(client));
  return n / ((performance.now() - started) / 1000);
}

const { root } = await cachedCorpus({ ...N, scans: 0 });
const t = tempDir('filedock-bench-ftload-');
const s = await startTestServer({ SERVICE_THUMBS_ON_SYNC: '0' });
try {
  const token = await s.login();
  mkdirSync(join(t.dir, 'bench', 'big'), { recursive: true });
  mkdirSync(join(t.dir, 'bench', 'up'));
  for (let i = 0; i < ENTRIES; i++) writeFileSync(join(t.dir, 'bench', 'big', `e${String(i).padStart(5, '0')}.txt`), '');
  await addStorage(s, token, 'Bench', join(t.dir, 'bench'));
  for (let i = 0; ; i++) {
    const r = await s.api('GET', '/api/files/manager?path=/Bench/big&limit=1', { token });
    if (r.status === 200 && r.body.total === ENTRIES) break;
    if (i > 600) throw new Error('the Bench storage never synced');
    await sleep(100);
  }
  const docs = join(t.dir, 'docs');
  mkdirSync(docs);
  for (const part of ['pdf', 'office']) spawnSync('cp', ['-r', join(root, part), docs]);
  // Paused once the storage's sync has queued its files: extraction runs only in `indexing` phases.
  await addStorage(s, token, 'Docs', docs);
  const repo = new TextExtractsRepo(s.server.db);
  while ((await repo.counts([DEFAULT_TENANT])).pending < 100) await sleep(20);
  s.server.pause(true);
  const headers = { authorization: `Bearer ${token}` };
  const page = `
math.randomseed(os.time())
request = function() return wrk.format("GET", "/api/files/manager?path=/Bench/big&limit=100&offset=" .. math.random(0, ${ENTRIES - 100})) end`;
  const rows: Array<Record<string, string | number>> = [];
  const rates: Record<string, { list: number[]; up: number[] }> = { idle: { list: [], up: [] }, indexing: { list: [], up: [] } };
  for (let run = 0; run < RUNS; run++) {
    for (const mode of ['idle', 'indexing'] as const) {
      s.server.pause(mode === 'idle');
      await sleep(1000);
      const l0 = load();
      const done0 = (await repo.counts([DEFAULT_TENANT])).done;
      const lag = monitorEventLoopDelay({ resolution: 5 });
      lag.enable();
      const ask = () => wrk(s.url, { connections: 8, seconds: SECONDS, headers, script: page, timeoutS: 30 });
      // wrk has died without a summary twice at load 13+: once more before giving up.
      const list = await ask().catch(ask);
      const up = await uploads(s, token, SECONDS, `${mode}${run}`);
      lag.disable();
      const extracted = (await repo.counts([DEFAULT_TENANT])).done - done0;
      rates[mode].list.push(list.rps);
      rates[mode].up.push(up);
      rows.push({
        run: run + 1,
        mode,
        'listings/s': list.rps,
        'listing p99 ms': list.p99,
        'uploads/s': up.toFixed(1),
        'files extracted meanwhile': extracted,
        'event loop delay p99 / max ms': `${(lag.percentile(99) / 1e6).toFixed(0)} / ${(lag.max / 1e6).toFixed(0)}`,
        errors: list.errors + list.non2xx,
        load: `${l0} → ${load()}`,
      });
    }
  }
  const ratio = (k: 'list' | 'up') => (median(rates.indexing[k]) / median(rates.idle[k])).toFixed(3);
  table(`listing and upload with extraction in the background (indexing/idle: listings ${ratio('list')}, uploads ${ratio('up')})`, rows);
  const left = await repo.counts([DEFAULT_TENANT]);
  if (left.pending === 0) console.log('warning: the backlog ran dry during the run (later indexing phases had nothing to extract)');
} finally {
  s.server.pause(false);
  await s.close();
  t.cleanup();
}
