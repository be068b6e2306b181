/**
 * Shared pieces of the benchmarks: start the built service as a child process,
 * an nginx anchor, autocannon runs, medians and a printed table. Compare with
 * an anchor in the same run, never with a number from another day.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, readFileSync, chmodSync, readdirSync, statSync, existsSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'node:http';
import { createCipheriv, randomBytes } from 'node:crypto';

export const root = new URL('..', import.meta.url).pathname;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Now on the monotonic clock, in µs (the clock of V8's profile timestamps). */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

export function table(title: string, rows: Array<Record<string, string | number>>): void {
  console.log(`\n## ${title}`);
  if (!rows.length) return;
  const cols = Object.keys(rows[0]);
  const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (vals: string[]) => '| ' + vals.map((v, i) => v.padEnd(w[i])).join(' | ') + ' |';
  console.log(line(cols));
  console.log('|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|');
  for (const r of rows) console.log(line(cols.map((c) => String(r[c]))));
}

/** Builds the bundle once (server only) so timings exclude compilation; a `BENCH_DIST` build is taken as it is. */
export function ensureBuilt(): void {
  if (process.env.BENCH_DIST) return;
  const r = spawnSync(process.execPath, [join(root, 'scripts/build.mjs'), '--server-only'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}

export interface Service {
  url: string;
  port: number;
  proc: ChildProcess;
  dataDir: string;
  stop(): Promise<void>;
  rssMb(): number;
}

/**
 * Starts `node dist/server/cli.js serve` on a free port with a fresh data dir; resolves when it answers.
 * `BENCH_DIST` (read at each start) names another tree's dist/, kept inside this checkout so node_modules
 * resolve: two builds can then alternate in the same conditions.
 */
export async function startService(
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  o: { stdout?: boolean } = {},
): Promise<Service & { startMs: number }> {
  const dataDir = env.SERVICE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'filedock-bench-'));
  const port = await freePort();
  const t0 = performance.now();
  const dist = process.env.BENCH_DIST ?? join(root, 'dist');
  const proc = spawn(process.execPath, [...nodeArgs, join(dist, 'server/cli.js'), 'serve'], {
    env: {
      ...process.env,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_LOG_LEVEL: 'warn',
      SERVICE_UPDATE_CHECK: '0',
      ...env,
    },
    // The service logs to stderr; `stdout`: what V8 prints (`--trace-gc`) reaches the bench's output too.
    stdio: ['ignore', o.stdout ? 'inherit' : 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      const r = await fetch(`${url}/api/capabilities`);
      if (r.status === 200) break;
    } catch {
      /* not yet */
    }
    if (proc.exitCode !== null) throw new Error('service exited during start');
    await sleep(5);
  }
  const startMs = performance.now() - t0;
  return {
    url,
    port,
    proc,
    dataDir,
    startMs,
    rssMb: () => Number(readFileSync(`/proc/${proc.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) / 1024,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      if (!env.SERVICE_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** nginx serving `dir` on a free port (the anchor); null when nginx is missing. */
export async function startNginx(dir: string, extra = ''): Promise<{ url: string; stop(): void } | null> {
  if (spawnSync('sh', ['-c', 'command -v nginx']).status !== 0) return null;
  // nginx workers run as an unprivileged user: the served folder (often a mkdtemp, 0700) must be readable.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const conf = mkdtempSync(join(tmpdir(), 'nginx-bench-'));
  mkdirSync(join(conf, 'logs'));
  writeFileSync(
    join(conf, 'nginx.conf'),
    `
worker_processes 1; daemon off; pid ${conf}/nginx.pid; error_log ${conf}/logs/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path ${conf}/body; proxy_temp_path ${conf}/proxy; fastcgi_temp_path ${conf}/fcgi; uwsgi_temp_path ${conf}/uwsgi; scgi_temp_path ${conf}/scgi;
  server { listen 127.0.0.1:${port}; root ${dir}; ${extra} } }`,
  );
  const proc = spawn('nginx', ['-p', conf, '-c', join(conf, 'nginx.conf')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url + '/');
      break;
    } catch {
      await sleep(10);
    }
  }
  return {
    url,
    stop: () => {
      proc.kill('SIGTERM');
      rmSync(conf, { recursive: true, force: true });
    },
  };
}

/** autocannon for `seconds` with `connections`; returns requests/s and latency percentiles. */
export async function cannon(
  url: string,
  o: { connections: number; seconds: number; headers?: Record<string, string> },
): Promise<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }> {
  const autocannon = (await import('autocannon')).default as unknown as (opts: object) => Promise<any>;
  const r = await autocannon({ url, connections: o.connections, duration: o.seconds, headers: o.headers ?? {}, pipelining: 1 });
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

const MiB = 1 << 20;

/** Incompressible bytes made on the fly (AES-CTR over zeros), never held in memory. */
export function noise(bytes: number): Readable {
  const cipher = createCipheriv('aes-128-ctr', randomBytes(16), randomBytes(16));
  const zeros = Buffer.alloc(MiB);
  let left = bytes;
  return new Readable({
    highWaterMark: MiB,
    read() {
      if (left === 0) return void this.push(null);
      const n = Math.min(left, MiB);
      left -= n;
      this.push(cipher.update(zeros.subarray(0, n)));
    },
  });
}

export interface WrkResult {
  rps: number;
  requests: number;
  /** Latency percentiles in ms. */
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Socket errors (connect, read, write, timeout) and non-2xx/3xx answers. */
  errors: number;
  timeouts: number;
  non2xx: number;
  /** CPU seconds wrk itself used (Lua's os.clock): near `seconds` means the client, not the server, was the bottleneck. */
  cpuS: number;
}

/**
 * wrk with ONE thread (it is a C event loop: on two shared cores it takes a
 * fraction of what autocannon takes, and the same for every server measured).
 * `script` is Lua text (e.g. a `request` function picking random paths); the
 * summary is printed by our own `done` hook so percentiles are exact.
 */
export function wrk(
  url: string,
  o: { connections: number; seconds: number; headers?: Record<string, string>; script?: string; timeoutS?: number },
): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'wrk-'));
  const lua = join(dir, 'bench.lua');
  writeFileSync(
    lua,
    `${o.script ?? ''}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"duration_us":%d,"p50":%d,"p95":%d,"p99":%d,"max":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"cpu_s":%.3f}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max, e.connect, e.read, e.write, e.status, e.timeout, os.clock()))
end
`,
  );
  const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, `--timeout`, `${o.timeoutS ?? 10}s`, '-s', lua];
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    const p = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('exit', () => {
      rmSync(dir, { recursive: true, force: true });
      const m = out.match(/^WRK (\{.*\})$/m);
      if (!m) return reject(new Error(`wrk printed no summary:\n${out}`));
      const j = JSON.parse(m[1]);
      const ms = (us: number) => Math.round(us / 10) / 100;
      resolve({
        rps: Math.round(j.requests / (j.duration_us / 1e6)),
        requests: j.requests,
        p50: ms(j.p50),
        p95: ms(j.p95),
        p99: ms(j.p99),
        max: ms(j.max),
        errors: j.connect + j.read + j.write + j.timeout,
        timeouts: j.timeout,
        non2xx: j.status,
        cpuS: j.cpu_s,
      });
    });
  });
}

/**
 * The plain Node static server anchor: what a straightforward
 * `http.createServer` costs per request when it opens the file, `fstat`s the
 * descriptor, reads it whole, closes it and answers with one `end(buf)` (no
 * framework, auth or catalogue; files up to 16 MiB). Runs in its own process
 * so it competes for the cores exactly like the service does.
 */
export async function startPlainNode(dir: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const code = `
const http = require('node:http'), fs = require('node:fs'), path = require('node:path');
const root = ${JSON.stringify(dir)};
http.createServer((req, res) => {
  const file = path.join(root, decodeURIComponent(req.url.split('?')[0]));
  if (!file.startsWith(root)) { res.statusCode = 403; return res.end(); }
  const fail = (fd) => { if (fd !== undefined) fs.close(fd, () => {}); res.statusCode = 404; res.end(); };
  fs.open(file, 'r', (err, fd) => {
    if (err) return fail();
    fs.fstat(fd, (err, st) => {
      if (err || !st.isFile() || st.size > 16 << 20) return fail(fd);
      const buf = Buffer.allocUnsafe(st.size);
      fs.read(fd, buf, 0, st.size, 0, (err, n) => {
        fs.close(fd, () => {});
        if (err) { res.statusCode = 500; return res.end(); }
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': n, 'last-modified': st.mtime.toUTCString() });
        res.end(n === buf.length ? buf : buf.subarray(0, n));
      });
    });
  });
}).listen(${port}, '127.0.0.1', () => process.send('ready'));`;
  const proc = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((r) => proc.once('message', r));
  return { url: `http://127.0.0.1:${port}`, pid: proc.pid!, stop: () => new Promise<void>((r) => (proc.once('exit', () => r()), proc.kill('SIGTERM'))) };
}

/** User and kernel CPU seconds a process has used so far (/proc/<pid>/stat utime, stime). */
export function cpuTimes(pid: number): { user: number; sys: number } {
  const f = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return { user: Number(f[11]) / 100, sys: Number(f[12]) / 100 };
}

/** User + kernel CPU seconds a process's main thread (its first task) has used so far. */
export function mainThreadCpu(pid: number): number {
  const f = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** RSS of a process in MB. */
export const rssOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) / 1024;

/** The newest main-thread profile `node --cpu-prof` wrote into `dir` (CPU.<date>.<time>.<pid>.<thread>.<n>; worker threads write their own). */
export function latestMainProfile(dir: string): string | undefined {
  return readdirSync(dir)
    .filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/**
 * Self time per function of a V8 `.cpuprofile` (from `node --cpu-prof`), top
 * `n` rows with their share of the busy samples (idle left out: the process
 * also idles while the anchors run): what docs/benchmarks.md quotes. With
 * `windows` only samples inside them count: [start, end] pairs in µs of the
 * monotonic clock (`monotonicUs()` in the bench process reads the same clock
 * V8 stamps its samples with).
 */
export function profileSummary(file: string, n = 15, windows?: Array<[number, number]>): Array<{ function: string; where: string; 'self %': string }> {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
    samples: number[];
    startTime: number;
    timeDeltas: number[];
  };
  const byId = new Map(prof.nodes.map((x) => [x.id, x.callFrame]));
  const counts = new Map<string, number>();
  let total = 0;
  let at = prof.startTime;
  let windowed = 0;
  prof.samples.forEach((id, i) => {
    at += prof.timeDeltas[i];
    if (windows && !windows.some(([a, b]) => at >= a && at <= b)) return;
    windowed++;
    const f = byId.get(id)!;
    if (f.functionName === '(idle)') return;
    total++;
    const where = f.url ? `${f.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'}\t${where}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  const rows = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, c]) => {
      const [fn, where] = k.split('\t');
      return { function: fn, where, 'self %': ((c / total) * 100).toFixed(1) };
    });
  // Within windows, the main thread's busy share tells whether it was the bottleneck.
  if (!windows) return rows;
  return [{ function: '(busy: samples not idle)', where: `${total} of ${windowed}`, 'self %': ((total / Math.max(1, windowed)) * 100).toFixed(1) }, ...rows];
}

/**
 * A generated tree of `files` empty files in `dirs` folders (100 folders per
 * top folder), kept in the temp dir across runs; returns its root.
 */
export function fileTree(files: number, dirs: number): string {
  const root = join(tmpdir(), `filedock-bench-tree-${files}-${dirs}`);
  if (existsSync(join(root, '.complete'))) return root;
  console.log(`generating ${files} files in ${dirs} folders under ${root} ...`);
  mkdirSync(root, { recursive: true });
  const per = Math.ceil(files / dirs);
  for (let d = 0; d < dirs; d++) {
    const dir = join(root, `d${String(Math.floor(d / 100)).padStart(3, '0')}`, `sub ${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < per && d * per + f < files; f++) writeFileSync(join(dir, `file-${f}.txt`), '');
  }
  writeFileSync(join(root, '.complete'), '');
  return root;
}

/** A JSON caller of the service signed in as `email` (bearer token), with a wait for a sync run to end. */
export async function apiClient(url: string, email: string, password: string) {
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const call = async (method: string, path: string, body?: unknown, retried = false): Promise<{ status: number; body: any }> => {
    try {
      const r = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as any };
    } catch (e) {
      // A pooled keep-alive socket the service closed as the request left: once more on a fresh one.
      if (retried || method !== 'GET') throw e;
      return call(method, path, body, true);
    }
  };
  /** The run once it has completed or failed (throws after `timeoutMs`). */
  const waitRun = async (runId: number, timeoutMs: number) => {
    for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(50)) {
      const run = (await call('GET', `/api/admin/sync/runs/${runId}`)).body;
      if (run.status === 'completed' || run.status === 'failed') return run;
    }
    throw new Error(`sync run ${runId} did not end within ${timeoutMs} ms`);
  };
  return Object.assign(call, { token, waitRun });
}

/** Where `millionTree` keeps its tree (`tree/`) and what a bench moved out of it for a while (`attic/`). */
export const MILLION_HOME = join(tmpdir(), 'filedock-bench-million');
/** A name of exactly 255 bytes (the longest a Linux file system takes) ending in `tag`. */
export const longName = (tag: string) => tag.padStart(255, 'n');

/**
 * Issue 38's tree, generated once and kept in the temp dir: 1,000 folders of 1,000 empty files
 * (`dNNNN/file-NNN.txt`), one folder of 100,000 (`big/`), and a chain 100 folders deep of 255-byte
 * names with a 255-byte file at the bottom (`deep/`: 25 KB paths, past Linux's 4,096-byte PATH_MAX, so
 * the chain is made folder by folder with `mkdirat`). Sync fs calls in one process: about 90 s.
 */
export function millionTree(): string {
  const root = join(MILLION_HOME, 'tree');
  if (existsSync(join(MILLION_HOME, '.complete'))) return root;
  console.log(`generating the million-file tree under ${root} ...`);
  rmSync(MILLION_HOME, { recursive: true, force: true });
  mkdirSync(join(root, 'big'), { recursive: true });
  for (let d = 0; d < 1000; d++) {
    const dir = join(root, `d${String(d).padStart(4, '0')}`);
    mkdirSync(dir);
    for (let f = 0; f < 1000; f++) closeSync(openSync(join(dir, `file-${String(f).padStart(3, '0')}.txt`), 'w'));
  }
  for (let f = 0; f < 100_000; f++) closeSync(openSync(join(root, 'big', `file-${String(f).padStart(5, '0')}.txt`), 'w'));
  // openat/mkdirat by hand: the chain's paths are past what a path-taking call (or a shell's `cd`) accepts.
  const chain = `import os
fd = os.open('deep', os.O_RDONLY)
for i in range(100):
    name = '-%d' % i
    name = name.rjust(255, 'n')
    os.mkdir(name, dir_fd=fd)
    fd = os.open(name, os.O_RDONLY, dir_fd=fd)
os.close(os.open('.txt'.rjust(255, 'n'), os.O_CREAT | os.O_WRONLY, dir_fd=fd))`;
  mkdirSync(join(root, 'deep'));
  const r = spawnSync('python3', ['-c', chain], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('the deep chain could not be made');
  writeFileSync(join(MILLION_HOME, '.complete'), '');
  return root;
}

/** Latency of GET /api/capabilities on a fresh connection every `everyMs` until stopped (ms; 10 s when it never answered). */
export function probe(url: string, everyMs = 50): { stop(): Promise<number[]> } {
  const lat: number[] = [];
  let running = true;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = request(`${url}/api/capabilities`, { agent: false, timeout: 10_000 }, (res) => {
        res.resume();
        res.on('end', () => (lat.push(performance.now() - t0), resolve()));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => (lat.push(10_000), resolve()));
      req.end();
    });
  const loop = (async () => {
    while (running) {
      await one();
      await sleep(everyMs);
    }
  })();
  return { stop: async () => ((running = false), await loop, lat) };
}

/** The p-th percentile (0–100) of xs; NaN when empty. */
export const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] : NaN);

/** A TCP proxy to `port` that forwards each chunk `delayMs` after it arrived, in order, both ways. */
export async function delayingProxy(port: number, delayMs: number): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const pipeDelayed = (from: Socket, to: Socket) => {
    // Timers of one duration fire in the order they were set: the byte order is kept.
    from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), delayMs));
    from.on('end', () => setTimeout(() => to.end(), delayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
  };
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    pipeDelayed(client, upstream);
    pipeDelayed(upstream, client);
  });
  const own = await freePort();
  await new Promise<void>((r) => server.listen(own, '127.0.0.1', r));
  return { port: own, close: () => (server.close(), sockets.forEach((s) => s.destroy())) };
}
