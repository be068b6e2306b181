/**
 * Multi-tenant mode's cost (issue 32, step 5): one service in multi-tenant mode with TENANTS tenants, each with 10
 * people and a storage of the same 10,000 files (100 folders of 100 empty files, and a 4 KiB file), 1,000,000
 * catalogue rows in all, and one in single-tenant mode with a storage of those 10,000 files plus every tenant's
 * tree as a storage of its own (the same rows; BENCH_SINGLE_ALL=0: its 10,000 files only). Measured on one tenant of
 * the many (by its host name, with its admin's token) against the single tenant, in the same run, rounds
 * alternating: a 100-entry folder's listing and the 4 KiB `GET /api/files/raw`, wrk at 32 connections; req/s,
 * p99 and CPU µs per request from /proc. Target: within 5 % of single-tenant mode.
 *
 *   npm run bench -- tenants   (BENCH_TENANTS=100, BENCH_FOLDERS=100, BENCH_PER_FOLDER=100, BENCH_RUNS=5, BENCH_SECONDS=8, BENCH_CPU_PROF=<dir>)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { request } from 'node:http';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { cpuTimes, ensureBuilt, latestMainProfile, median, monotonicUs, profileSummary, sleep, startService, table, wrk, type Service } from './lib';
import { adminEnv, mount } from './download';
import { tempDir } from '../test/helpers/tools';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 100);
const PEOPLE = 10;
const FOLDERS = Number(process.env.BENCH_FOLDERS ?? 100);
const PER_FOLDER = Number(process.env.BENCH_PER_FOLDER ?? 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNS = 32;
/** BENCH_CPU_PROF=<dir>: both services run under `--cpu-prof` (into <dir>/single and <dir>/multi; written at the stop). */
const PROF = process.env.BENCH_CPU_PROF;
const profArgs = (name: string): string[] => (PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(PROF, name)}`] : []);
/** BENCH_OPERATOR=1: also measured, the multi-tenant service's tenant 1 (the operator, with a storage of the same files): tells a tenant admin's path from the mode's. */
const OPERATOR = process.env.BENCH_OPERATOR === '1';
/** BENCH_TRACE_GC=1: the multi-tenant service's `--trace-gc` lines, between markers of the measured stretches, on stdout. */
const TRACE_GC = process.env.BENCH_TRACE_GC === '1';
/** BENCH_HEAP_SNAPSHOT=<dir>: a heap snapshot of the multi-tenant service once it idles, before the load (SIGUSR2). */
const HEAP = process.env.BENCH_HEAP_SNAPSHOT;
/** BENCH_NODE_ARGS='--trace-gc-nvp …': more Node/V8 flags for both services (their stdout then shown). */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** BENCH_SYNC_MODE=poll: the tenants' storages without a watcher (default fsnotify: one inotify watch a folder). */
const SYNC_MODE = process.env.BENCH_SYNC_MODE;
/**
 * The single-tenant service mounts the tenants' trees too (storages T0…), so both hold the same 1,000,100 rows:
 * the mode's cost at equal data. A million rows alone make a raw GET pay the collector in either mode (docs/tenants.md,
 * "Step 5, round two"). BENCH_SINGLE_ALL=0: the single-tenant service holds its 10,000 files only (round one's anchor).
 */
const SINGLE_ALL = process.env.BENCH_SINGLE_ALL !== '0';
const BOSS = { password: 'bench-password-1' };
const json = { 'content-type': 'application/json' };
// Cheaper password hashing: 1,100 accounts are made; the requests measured carry bearer tokens, never a password.
const env = { ...adminEnv, SERVICE_PASSWORD_COST: '14' };

/** A storage's files: FOLDERS folders of PER_FOLDER empty files, and `small.bin` (4 KiB) at its root. */
function tree(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'small.bin'), randomBytes(4096));
  for (let f = 0; f < FOLDERS; f++) {
    const d = join(dir, `d${String(f).padStart(3, '0')}`);
    mkdirSync(d);
    for (let i = 0; i < PER_FOLDER; i++) writeFileSync(join(d, `f${String(i).padStart(3, '0')}.txt`), '');
  }
}

/** A JSON call; `base`: a tenant's `/t/<slug>` prefix (fetch cannot set Host; wrk below does). */
async function call(url: string, method: string, path: string, o: { token?: string; base?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { ...json, ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) };
  const r = await fetch(url + (o.base ?? '') + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(body)}`);
  return body;
}

/** One GET to 127.0.0.1:`port` with `headers` as given (Host included). */
function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end();
  });
}

/** Waits until the last folder of a storage lists all its files: its first sync is through. */
async function synced(svc: Service, token: string, base = '', storage = 'Docs'): Promise<void> {
  const last = `${base}/api/files/manager?path=/${storage}/d${String(FOLDERS - 1).padStart(3, '0')}&limit=1`;
  for (let i = 0; ; i++) {
    const r = await fetch(svc.url + last, { headers: { authorization: `Bearer ${token}` } });
    if (r.ok && ((await r.json()) as { total: number }).total === PER_FOLDER) return;
    if (i > 6000) throw new Error('the first sync did not finish in 10 minutes');
    await sleep(100);
  }
}

/** Catalogue rows whose names the search index has not taken yet (its background pass; SQLite, read-only). */
function behind(svc: Service): number {
  const db = new Database(join(svc.dataDir, 'filedock.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT (SELECT max(id) FROM nodes) - coalesce((SELECT max(rowid) FROM search_fts), 0) AS n').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Waits until a process has used under 5 % of a core over 3 s (at most 10 minutes; 100 idle tenants use ~3 %); returns the seconds waited. */
async function idle(pid: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const a = cpuTimes(pid);
    await sleep(3000);
    const b = cpuTimes(pid);
    const waited = Math.round((performance.now() - t0) / 1000);
    if (b.user + b.sys - a.user - a.sys < 0.15 || waited > 600) return waited;
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-tenants-');
  const t0 = performance.now();
  tree(join(files.dir, 'single'));
  for (let t = 0; t < TENANTS; t++) tree(join(files.dir, `t${t}`));
  if (OPERATOR) tree(join(files.dir, 'operator'));
  console.log(`trees written: ${TENANTS + 1} × ${FOLDERS * PER_FOLDER + 1} files in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  /** The multi-tenant service's measured stretches, for its profile. */
  const windows = new Map<Service, Array<[number, number, string]>>();
  const single = await startService(env, [...profArgs('single'), ...NODE_ARGS], { stdout: NODE_ARGS.length > 0 });
  const multi = await startService(
    { ...env, SERVICE_MULTI_TENANT: '1' },
    [...profArgs('multi'), ...(HEAP ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP}`] : []), ...(TRACE_GC ? ['--trace-gc'] : []), ...NODE_ARGS],
    { stdout: TRACE_GC || NODE_ARGS.length > 0 },
  );
  try {
    const singleToken = await mount(single, 'Docs', join(files.dir, 'single'));
    await synced(single, singleToken);
    if (SINGLE_ALL) {
      for (let t = 0; t < TENANTS; t++) await mount(single, `T${t}`, join(files.dir, `t${t}`));
      for (let t = 0; t < TENANTS; t++) await synced(single, singleToken, '', `T${t}`);
    }

    const operator = (
      (await call(multi.url, 'POST', '/api/auth/login', { body: { email: adminEnv.SERVICE_ADMIN_EMAIL, password: adminEnv.SERVICE_ADMIN_PASSWORD } })) as {
        token: string;
      }
    ).token;
    const t1 = performance.now();
    const tokens: string[] = [];
    for (let t = 0; t < TENANTS; t++) {
      const base = `/t/t${t}`;
      const admin = { email: `boss@t${t}.test`, ...BOSS };
      await call(multi.url, 'POST', '/api/platform/tenants', {
        token: operator,
        body: { slug: `t${t}`, name: `Tenant ${t}`, hostnames: [`t${t}.bench.test`], admin },
      });
      const token = ((await call(multi.url, 'POST', '/api/auth/login', { base, body: admin })) as { token: string }).token;
      await call(multi.url, 'POST', '/api/admin/storages', {
        token,
        base,
        body: {
          name: 'Docs',
          driver: 'local',
          config: { path: join(files.dir, `t${t}`) },
          sync_interval: '24h',
          ...(SYNC_MODE ? { sync_mode: SYNC_MODE } : {}),
        },
      });
      for (let p = 1; p < PEOPLE; p++)
        await call(multi.url, 'POST', '/api/admin/users', { token, base, body: { email: `p${p}@t${t}.test`, password: BOSS.password, role: 'user' } });
      tokens.push(token);
    }
    for (let t = 0; t < TENANTS; t++) await synced(multi, tokens[t], `/t/t${t}`);
    console.log(
      `${TENANTS} tenants, ${TENANTS * PEOPLE} people, ${TENANTS * (FOLDERS * PER_FOLDER + 1)} files catalogued in ${((performance.now() - t1) / 1000).toFixed(0)} s`,
    );

    const pick = Math.floor(TENANTS * 0.57);
    const host = `t${pick}.bench.test`;
    const opToken = OPERATOR ? await mount(multi, 'Docs', join(files.dir, 'operator')) : '';
    if (OPERATOR) await synced(multi, opToken);
    const targets: Array<[string, Service, Record<string, string>]> = [
      ['single-tenant', single, { authorization: `Bearer ${singleToken}` }],
      // `Host`, capitalised: wrk's script then replaces its own Host header instead of sending a second one.
      [`multi-tenant (tenant ${pick} of ${TENANTS})`, multi, { authorization: `Bearer ${tokens[pick]}`, Host: host }],
      ...(OPERATOR
        ? [['multi-tenant (tenant 1, the operator)', multi, { authorization: `Bearer ${opToken}` }] as [string, Service, Record<string, string>]]
        : []),
    ];
    const workloads: Array<[string, string]> = [
      [`listing, ${PER_FOLDER} entries`, `/api/files/manager?path=/Docs/d${String(Math.min(50, FOLDERS - 1)).padStart(3, '0')}&limit=100`],
      ['4 KiB GET /api/files/raw', '/api/files/raw?path=/Docs/small.bin'],
    ];
    // The check before the load, as wrk will ask (node:http: fetch cannot send a Host of its own).
    for (const [, path] of workloads)
      for (const [tname, svc, headers] of targets) {
        const r = await get(svc.port, path, headers);
        if (r.status !== 200) throw new Error(`${tname} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
      }
    if (HEAP) {
      await idle(multi.proc.pid!);
      multi.proc.kill('SIGUSR2');
      // Written while the process stands still: done once it uses CPU at its idle rate again.
      await sleep(5000);
      await idle(multi.proc.pid!);
      console.log(`heap snapshot of the multi-tenant service written to ${HEAP}`);
    }
    // The first syncs' follow-up work (search names of a million files, thumbnails' checks) runs in the background:
    // measure each service once it idles, not while it catches up (its CPU would be charged to the requests).
    for (const [tname, svc] of targets) {
      const waited = await idle(svc.proc.pid!);
      // The status route's memory section (the operator's): a larger heap costs every request in the collector's time.
      const asAdmin = { authorization: `Bearer ${svc === single ? singleToken : operator}` };
      const m = JSON.parse((await get(svc.port, '/api/admin/status', asAdmin)).body).memory as Record<string, number> | undefined;
      console.log(
        `${tname}: idle after ${waited} s; ${behind(svc)} names not in the search index yet; RSS ${m?.rss_mb} MB, heap ${m?.heap_used_mb} of ${m?.heap_total_mb} MB, external ${m?.external_mb} MB`,
      );
    }

    const got = new Map<string, Array<{ rps: number; p99: number; cpuUs: number }>>();
    for (let run = 0; run < RUNS; run++)
      for (const [wname, path] of workloads)
        for (const [tname, svc, headers] of run % 2 ? [...targets].reverse() : targets) {
          const pid = svc.proc.pid!;
          const c0 = cpuTimes(pid);
          const w0 = monotonicUs();
          if (TRACE_GC || NODE_ARGS.length) console.log(`== start: ${wname}, ${tname}`);
          const r = await wrk(svc.url + path, { connections: CONNS, seconds: SECONDS, headers });
          if (TRACE_GC || NODE_ARGS.length) console.log(`== end: ${wname}, ${tname}`);
          const c1 = cpuTimes(pid);
          windows.set(svc, [...(windows.get(svc) ?? []), [w0, monotonicUs(), wname]]);
          if (r.errors || r.non2xx) console.log(`${tname} ${wname} round ${run + 1}: ${r.errors} socket errors, ${r.non2xx} answers not 2xx/3xx`);
          const key = `${wname}\0${tname}`;
          got.set(key, [...(got.get(key) ?? []), { rps: r.rps, p99: r.p99, cpuUs: ((c1.user + c1.sys - c0.user - c0.sys) * 1e6) / r.requests }]);
        }

    const rows = [];
    let verdict = true;
    for (const [wname] of workloads) {
      const of = (t: string) => got.get(`${wname}\0${t}`)!;
      const base = median(of(targets[0][0]).map((x) => x.rps));
      for (const [tname] of targets) {
        const xs = of(tname);
        const rps = median(xs.map((x) => x.rps));
        const ratio = rps / base;
        if (tname !== targets[0][0] && ratio < 0.95) verdict = false;
        rows.push({
          workload: wname,
          mode: tname,
          'req/s (median)': rps,
          'runs req/s': xs.map((x) => x.rps).join(' / '),
          'x single-tenant': ratio.toFixed(3),
          'p99 ms (median)': median(xs.map((x) => x.p99)),
          'CPU µs/req (median)': Math.round(median(xs.map((x) => x.cpuUs))),
        });
      }
    }
    table(
      `Multi-tenant mode's cost: ${TENANTS} tenants × ${PEOPLE} people × ${FOLDERS * PER_FOLDER} files (${RUNS} rounds of ${SECONDS} s, ${CONNS} connections)`,
      rows,
    );
    console.log(`names not in the search index after the load: single-tenant ${behind(single)}, multi-tenant ${behind(multi)}`);
    console.log(`RSS: single-tenant ${single.rssMb().toFixed(0)} MB, multi-tenant ${multi.rssMb().toFixed(0)} MB`);
    console.log(`target (within 5 % of single-tenant mode, req/s): ${verdict ? 'met' : 'missed'}`);
  } finally {
    await single.stop();
    await multi.stop();
    files.cleanup();
  }
  if (PROF)
    for (const [name, svc] of [
      ['single', single],
      ['multi', multi],
    ] as const) {
      const prof = latestMainProfile(join(PROF, name));
      if (!prof) continue;
      const spans = windows.get(svc) ?? [];
      table(
        `The ${name}-tenant service's main thread while measured (${prof})`,
        profileSummary(
          prof,
          30,
          spans.map(([a, b]) => [a, b]),
        ),
      );
      // The stretches by workload, for a comparison of two profiles by function.
      writeFileSync(`${prof}.windows.json`, JSON.stringify(spans));
    }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
