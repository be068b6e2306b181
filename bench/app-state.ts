/**
 * What app state and app locks cost a listing (issue 21 target: with 32
 * `app_state` items per file, listing p99 within 10 % of none). One service,
 * storage `Bench` with three 1,000-file folders: `plain`, `state` (32 items
 * on every file, as 20 apps would put them) and `locked` (every tenth file
 * locked, so the storage's pages join `file_locks`). The service is restarted
 * after the rows are written (it reads which storages hold locks at start).
 * HTTP: 1,000-row pages with 8 connections (wrk), the folders alternated twice
 * so load drift hits all three. In process: the uncached page query
 * (ListingRepo.page, no folder index) of each folder, with and without the
 * lock join.
 *
 * Requests carry a browser's `Accept-Encoding` (pages come in brotli from
 * their second request on, server/files/compressed-pages.ts); BENCH_ENCODING
 * =gzip measures the gzip copies, =identity the plain bytes. The table shows
 * the bytes each page takes on the wire in that encoding.
 *
 * Then plain and state side by side, both loaded at once in each round (on a
 * shared machine a stall then hits both, where alternating rounds compare
 * lucky rounds with unlucky ones); the verdict there compares median p99s.
 * The service's own CPU per request (user and kernel, from /proc) is
 * reported beside the latencies: unlike p99 it hardly moves with the load of
 * the other processes on the machine.
 *
 *   npm run bench -- app-state        (BENCH_ENTRIES=1000, BENCH_SECONDS=8, BENCH_ROUNDS=2, BENCH_ENCODING)
 */
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../server/db';
import { ListingRepo } from '../server/files/listing.repo';
import { cpuTimes, ensureBuilt, startService, table, wrk } from './lib';
import { adminEnv } from './download';
import { syncedFolder } from './listing';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const ENCODING = process.env.BENCH_ENCODING ?? 'gzip, deflate, br';
const ITEMS = 32;
const FOLDERS = ['plain', 'state', 'locked'] as const;

/** 32 items of 20 apps, about as long as real ones (`app7:awaiting-signature-07`). */
const items = (i: number) => JSON.stringify(Array.from({ length: ITEMS }, (_, k) => `app${k % 20}:awaiting-step-${String(k).padStart(2, '0')}-${i % 7}`));

/** Bytes on the wire of one response (fetch would decode it). */
const wireBytes = (url: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    request(url, { headers }, (res) => {
      let n = 0;
      res
        .on('data', (b: Buffer) => (n += b.length))
        .on('end', () => resolve(n))
        .on('error', reject);
    })
      .on('error', reject)
      .end();
  });

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** The service over the three folders (rows written, then restarted); `nodeArgs` e.g. --cpu-prof. */
export async function stateService(nodeArgs: string[] = []) {
  ensureBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'filedock-bench-state-'));
  const env = { ...adminEnv, SERVICE_DATA_DIR: dataDir };
  const first = await syncedFolder(ENTRIES, env, [], [...FOLDERS]);
  await first.svc.stop();
  const dbFile = join(dataDir, 'filedock.sqlite');
  const db = openDatabase(dbFile);
  const stateRow = db.sqlite.prepare('UPDATE nodes SET app_state = ? WHERE id = ?');
  const lockRow = db.sqlite.prepare(
    "INSERT INTO file_locks (node_id, plugin, plugin_label, reason, reason_text, until, token_hash, locked_by, locked_at) VALUES (?, 'sign', 'Fill and sign', 'signing', 'Out for signature', NULL, 'x', NULL, '2026-11-27T00:00:00Z')",
  );
  db.sqlite.transaction(() => {
    const rows = (dir: string) =>
      db.sqlite.prepare("SELECT id FROM nodes WHERE storage_id = 1 AND dir = ? AND type = 'file' ORDER BY id").pluck().all(dir) as number[];
    rows('state').forEach((id, i) => stateRow.run(items(i), id));
    rows('locked').forEach((id, i) => i % 10 === 0 && lockRow.run(id));
  })();
  const svc = await startService(env, nodeArgs);
  return {
    svc,
    db,
    auth: first.auth,
    page: (f: string) => `${svc.url}/api/files/manager?path=/Bench/${f}&limit=1000`,
    async cleanup() {
      await svc.stop();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(first.filesDir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const { svc, db, auth, page, cleanup } = await stateService();
  try {
    const sizes: Record<string, number> = {};
    for (const f of FOLDERS) {
      const body = await (await fetch(page(f), { headers: auth })).text();
      const l = JSON.parse(body);
      const locked = l.entries.filter((e: { locked: boolean }) => e.locked).length;
      const withState = l.entries.filter((e: { app_state: string[] }) => e.app_state.length === ITEMS).length;
      if (l.entries.length !== Math.min(1000, ENTRIES)) throw new Error(`${f}: ${l.entries.length} entries`);
      if ((f === 'locked') !== locked > 0 || (f === 'state') !== withState > 0) throw new Error(`${f}: ${locked} locked, ${withState} with state`);
      sizes[f] = body.length;
    }
    const wire: Record<string, number> = {};
    for (let i = 0; i < 2; i++) {
      // the first asks for the copies, made meanwhile
      for (const f of FOLDERS) wire[f] = await wireBytes(page(f), { ...auth, 'accept-encoding': ENCODING });
      await new Promise((r) => setTimeout(r, 300));
    }
    const http: Record<string, { rps: number[]; p50: number[]; p99: number[]; requests: number; user: number; sys: number }> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const f of FOLDERS) {
        const cpu0 = cpuTimes(svc.proc.pid!);
        const r = await wrk(page(f), { connections: 8, seconds: SECONDS, headers: { ...auth, 'accept-encoding': ENCODING } });
        const cpu1 = cpuTimes(svc.proc.pid!);
        if (r.errors + r.non2xx) throw new Error(`${f}: ${r.errors} errors, ${r.non2xx} non-2xx`);
        const h = (http[f] ??= { rps: [], p50: [], p99: [], requests: 0, user: 0, sys: 0 });
        h.rps.push(r.rps), h.p50.push(r.p50), h.p99.push(r.p99);
        (h.requests += r.requests), (h.user += cpu1.user - cpu0.user), (h.sys += cpu1.sys - cpu0.sys);
      }
    }
    const perReq = (s: number, n: number) => Math.round((s / n) * 1e6);
    const best = (xs: number[]) => Math.min(...xs);
    table(
      `HTTP: 1,000-row pages, 8 connections, Accept-Encoding: ${ENCODING}, ${SECONDS} s x ${ROUNDS} rounds (load ${loadavg()[0].toFixed(2)}; noisy: a shared machine)`,
      FOLDERS.map((f) => ({
        folder: f,
        'body KB': Math.round(sizes[f] / 1024),
        'wire KB': +(wire[f] / 1024).toFixed(1),
        'req/s': Math.round(Math.max(...http[f].rps)),
        'p50 ms': best(http[f].p50),
        'p99 ms (best round)': best(http[f].p99),
        'p99 ms (rounds)': http[f].p99.join(' / '),
        'service CPU µs/req (user + kernel)': `${perReq(http[f].user, http[f].requests)} + ${perReq(http[f].sys, http[f].requests)}`,
      })),
    );
    const ratio = best(http.state.p99) / best(http.plain.p99);
    console.log(`32 app_state items per file: p99 ${((ratio - 1) * 100).toFixed(1)} % vs none (target within 10 %): ${ratio <= 1.1 ? 'PASS' : 'FAIL'}`);

    // Side by side: both folders loaded at once (4 connections each), so every stall of a shared machine hits both.
    const pairs: Array<{ plain: number; state: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [p, st] = await Promise.all(
        ['plain', 'state'].map((f) => wrk(page(f), { connections: 4, seconds: SECONDS, headers: { ...auth, 'accept-encoding': ENCODING } })),
      );
      if (p.errors + p.non2xx + st.errors + st.non2xx) throw new Error('errors side by side');
      pairs.push({ plain: p.p99, state: st.p99 });
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
    const side = med(pairs.map((x) => x.state)) / med(pairs.map((x) => x.plain));
    console.log(
      `Side by side (4 + 4 connections, ${ROUNDS} rounds, load ${loadavg()[0].toFixed(2)}): p99 plain / state ${pairs.map((x) => `${x.plain}/${x.state}`).join(', ')} ms; median state ${((side - 1) * 100).toFixed(1)} % vs none: ${side <= 1.1 ? 'PASS' : 'FAIL'}`,
    );

    // The page query itself, uncached: what a folder's first listing (or a folder above the index size) costs.
    const q = (locks: boolean, dir: string) => {
      const repo = new ListingRepo(db, () => locks);
      const times: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        repo.page({ storageId: 1, tenantId: 1, dir, sort: 'name', desc: false, limit: 1000, offset: 0, perm: 'editor' });
        times.push(performance.now() - t0);
      }
      return { p50: +pct(times, 0.5).toFixed(2), p99: +pct(times, 0.99).toFixed(2) };
    };
    const rows = [];
    for (let round = 0; round < 2; round++) {
      for (const [name, locks, dir] of [
        ['plain, no join (a storage without locks)', false, 'plain'],
        ['plain, lock join', true, 'plain'],
        ['32 items, no join', false, 'state'],
        ['locked folder, lock join', true, 'locked'],
      ] as const) {
        if (round === 1) rows.push({ query: name, ...q(locks, dir) });
        else q(locks, dir); // warm-up round
      }
    }
    table(
      `In process: one uncached 1,000-row page query, 200 runs each (load ${loadavg()[0].toFixed(2)})`,
      rows.map((r) => ({ query: r.query, 'p50 ms': r.p50, 'p99 ms': r.p99 })),
    );
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
