/**
 * Shared pieces of the benchmarks: start the built service as a child process,
 * an nginx anchor, autocannon runs, medians and a printed table. Compare with
 * an anchor in the same run, never with a number from another day.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, readFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { createCipheriv, randomBytes } from 'node:crypto';

export const root = new URL('..', import.meta.url).pathname;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
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

/** Builds the bundle once (server only) so timings exclude compilation. */
export function ensureBuilt(): void {
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

/** Starts `node dist/server/cli.js serve` on a free port with a fresh data dir; resolves when it answers. */
export async function startService(env: Record<string, string> = {}): Promise<Service & { startMs: number }> {
  const dataDir = env.SERVICE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'filedock-bench-'));
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn(process.execPath, [join(root, 'dist/server/cli.js'), 'serve'], {
    env: { ...process.env, SERVICE_DATA_DIR: dataDir, SERVICE_PORT: String(port), SERVICE_HOST: '127.0.0.1', SERVICE_LOG_LEVEL: 'warn', SERVICE_UPDATE_CHECK: '0', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
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
    url, port, proc, dataDir, startMs,
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
  writeFileSync(join(conf, 'nginx.conf'), `
worker_processes 1; daemon off; pid ${conf}/nginx.pid; error_log ${conf}/logs/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path ${conf}/body; proxy_temp_path ${conf}/proxy; fastcgi_temp_path ${conf}/fcgi; uwsgi_temp_path ${conf}/uwsgi; scgi_temp_path ${conf}/scgi;
  server { listen 127.0.0.1:${port}; root ${dir}; ${extra} } }`);
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
  return { url, stop: () => { proc.kill('SIGTERM'); rmSync(conf, { recursive: true, force: true }); } };
}

/** autocannon for `seconds` with `connections`; returns requests/s and latency percentiles. */
export async function cannon(url: string, o: { connections: number; seconds: number; headers?: Record<string, string> }): Promise<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }> {
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
