/**
 * Issue 38's 100,000-entry folder on its own: one local storage holding ONE folder (`big/`) of 100,000
 * empty files (generated once, kept in the temp dir), the first sync, a wait until the service is idle
 * (its CPU < 3 % over 3 s), then per round the two wrk runs of bench/million.ts (8 clients, 1,000-row
 * pages by name: the first page; random offsets), with the service's CPU per request (process and main
 * thread, /proc) and the load. Round 1's first page is the folder's first listing since start.
 *
 * Once, after the wrk rounds, a Node closed-loop client (8 keep-alive connections) records every
 * request's own latency to cross-check wrk's percentiles; `--record-first` runs it BEFORE the wrk rounds
 * instead, so it sees the first listing (and whatever that starts), with the slowest requests' times.
 * `--profile`: the service runs with `--cpu-prof`; the main thread's top functions during the random pages.
 *
 *   npm run bench -- big-folder [--rounds N] [--record-first] [--profile]
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminEnv } from './download';
import { apiClient, cpuTimes, ensureBuilt, latestMainProfile, mainThreadCpu, monotonicUs, pct, profileSummary, sleep, startService, table, wrk } from './lib';

const ROUNDS = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 3;
const RECORD_FIRST = process.argv.includes('--record-first');
const PROFILE = process.argv.includes('--profile');
const SECONDS = 10;
const CLIENTS = 8;

/** `big/` with 100,000 empty files under the temp dir, made once. */
function bigTree(): string {
  const home = join(tmpdir(), 'filedock-bench-big-folder');
  const root = join(home, 'tree');
  if (existsSync(join(home, '.complete'))) return root;
  console.log(`generating 100,000 files under ${root} ...`);
  mkdirSync(join(root, 'big'), { recursive: true });
  for (let f = 0; f < 100_000; f++) closeSync(openSync(join(root, 'big', `file-${String(f).padStart(5, '0')}.txt`), 'w'));
  writeFileSync(join(home, '.complete'), '');
  return root;
}

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const cpuOf = (pid: number) => {
  const t = cpuTimes(pid);
  return t.user + t.sys;
};

/**
 * Resolves once the process used < 3 % of a core over 3 s (the search indexer and the like are done);
 * under `--profile` its main thread (the profiler's own thread takes ~7 %).
 */
async function idle(pid: number, boundMs = 600_000): Promise<number> {
  const t0 = performance.now();
  const used = PROFILE ? () => mainThreadCpu(pid) : () => cpuOf(pid);
  for (;;) {
    const c0 = used();
    await sleep(3000);
    if ((used() - c0) / 3 < 0.03 || performance.now() - t0 > boundMs) return performance.now() - t0;
  }
}

/**
 * `seconds` of a closed loop on `connections` keep-alive sockets: each request's start (ms from the run's
 * start) and latency, so a wrk percentile can be checked and a stall placed in time.
 */
async function recorded(url: string, token: string, random: boolean): Promise<Array<{ at: number; ms: number }>> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const out: Array<{ at: number; ms: number }> = [];
  const t0 = performance.now();
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const at = performance.now();
      const offset = random ? `&offset=${Math.floor(Math.random() * 99_001)}` : '';
      const req = request(`${url}/api/files/manager?path=/Big/big&limit=1000${offset}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
          out.push({ at: at - t0, ms: performance.now() - at });
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() - t0 < SECONDS * 1000) await one();
    }),
  );
  agent.destroy();
  return out;
}

ensureBuilt();
const root = bigTree();
const profDir = mkdtempSync(join(tmpdir(), 'filedock-big-folder-prof-'));
const svc = await startService(adminEnv, PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
const randomWindows: Array<[number, number]> = [];
const pid = svc.proc.pid!;
const api = await apiClient(svc.url, adminEnv.SERVICE_ADMIN_EMAIL, adminEnv.SERVICE_ADMIN_PASSWORD);
const rows: Array<Record<string, string | number>> = [];
const notes: string[] = [];

async function record(when: string): Promise<void> {
  for (const random of [false, true]) {
    const c0 = cpuOf(pid);
    const m0 = mainThreadCpu(pid);
    const lat = await recorded(svc.url, api.token, random);
    const ms = lat.map((l) => l.ms);
    const slow = [...lat].sort((a, b) => b.ms - a.ms).slice(0, 5);
    rows.push({
      round: when,
      pages: random ? 'random' : 'first',
      client: 'node',
      'req/s': Math.round(lat.length / SECONDS),
      'p50 ms': pct(ms, 50).toFixed(1),
      'p99 ms': pct(ms, 99).toFixed(1),
      'max ms': Math.max(...ms).toFixed(1),
      'CPU ms/req': (((cpuOf(pid) - c0) * 1000) / lat.length).toFixed(2),
      'main ms/req': (((mainThreadCpu(pid) - m0) * 1000) / lat.length).toFixed(2),
      load: load(),
    });
    notes.push(
      `node client, ${when}, ${random ? 'random' : 'first'} pages: ${lat.length} requests; slowest ${slow.map((s) => `${s.ms.toFixed(0)} ms at ${(s.at / 1000).toFixed(2)} s`).join(', ')}`,
    );
  }
}

try {
  const st = await api('POST', '/api/admin/storages', { name: 'Big', driver: 'local', config: { path: root }, sync_mode: 'ondemand' });
  if (st.status !== 200) throw new Error(`storage: ${st.status} ${JSON.stringify(st.body)}`);
  const runId = (await api('GET', `/api/admin/sync/runs?storage_id=${st.body.id}&limit=1`)).body.runs[0].id;
  const run = await api.waitRun(runId, 1_800_000);
  notes.push(
    `first sync: ${run.status}, +${run.added}, ${Date.parse(run.finished_at) - Date.parse(run.started_at)} ms; idle after another ${((await idle(pid)) / 1000).toFixed(0)} s`,
  );
  if (RECORD_FIRST) await record('before wrk');
  const lua = `math.randomseed(os.time())
request = function() return wrk.format("GET", "/api/files/manager?path=/Big/big&limit=1000&offset=" .. math.random(0, 99000)) end`;
  for (let round = 1; round <= ROUNDS; round++)
    for (const [what, script] of [
      ['first', undefined],
      ['random', lua],
    ] as const) {
      const c0 = cpuOf(pid);
      const m0 = mainThreadCpu(pid);
      const t0 = monotonicUs();
      const r = await wrk(`${svc.url}/api/files/manager?path=/Big/big&limit=1000`, {
        connections: CLIENTS,
        seconds: SECONDS,
        headers: { authorization: `Bearer ${api.token}` },
        script,
      });
      if (script) randomWindows.push([t0, monotonicUs()]);
      rows.push({
        round,
        pages: what,
        client: 'wrk',
        'req/s': r.rps,
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'max ms': r.max,
        'CPU ms/req': (((cpuOf(pid) - c0) * 1000) / r.requests).toFixed(2),
        'main ms/req': (((mainThreadCpu(pid) - m0) * 1000) / r.requests).toFixed(2),
        load: load(),
      });
      if (r.errors + r.non2xx) notes.push(`round ${round}, ${what}: ${r.errors} errors, ${r.non2xx} non-2xx`);
    }
  if (!RECORD_FIRST) await record('after wrk');
  notes.push(
    `service RSS ${svc.rssMb().toFixed(0)} MB, peak ${(Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)![1]) / 1024).toFixed(0)} MB`,
  );
} finally {
  await svc.stop();
}
table(`big/ (100,000 entries), 1,000-row pages by name, ${CLIENTS} clients, ${SECONDS} s each (${process.env.BENCH_DIST ?? 'dist'}; load now ${load()})`, rows);
for (const n of notes) console.log(`- ${n}`);
const prof = PROFILE && latestMainProfile(profDir);
if (prof) table('service profile, random pages (self time, main thread)', profileSummary(prof, 25, randomWindows));
