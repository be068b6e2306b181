/**
 * Raw download throughput: GET /api/files/raw of a 2 GiB file over loopback
 * against nginx with sendfile serving the same file, alternating runs in one
 * script, medians (curl drains both to /dev/null). BENCH_CLIENTS curls
 * download at once (the rate is their bytes over the wall time of the
 * slowest). The service's RSS is sampled during its downloads (target:
 * growth under 100 MB). Target: the service at least matches nginx.
 *
 *   node --import tsx bench/download.ts        (BENCH_RUNS=5, BENCH_MIB=2048, BENCH_CLIENTS=1)
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, median, startNginx, startService, table, type Service, noise } from './lib';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1);
const ADMIN = { email: 'bench@example.test', password: 'bench-password-1' };

/** Signs in and mounts `dir` as storage `name`; returns the bearer token. */
export async function mount(svc: Service, name: string, dir: string): Promise<string> {
  const login = await fetch(`${svc.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  const token = ((await login.json()) as { token: string }).token;
  const st = await fetch(`${svc.url}/api/admin/storages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name, driver: 'local', config: { path: dir }, sync_interval: '24h' }),
  });
  if (st.status !== 200) throw new Error(`storage: ${st.status} ${await st.text()}`);
  return token;
}

export const adminEnv = { SERVICE_ADMIN_EMAIL: ADMIN.email, SERVICE_ADMIN_PASSWORD: ADMIN.password };

/** curl's own time for one transfer, in seconds. */
export function curl(args: string[]): number {
  return Number(execFileSync('curl', ['-sS', '-o', '/dev/null', '-w', '%{time_total}', '--fail', ...args], { encoding: 'utf8' }));
}

/** Seconds until `n` concurrent curls of `args` have all finished. */
async function curls(n: number, args: string[]): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from(
      { length: n },
      () => new Promise<void>((resolve, reject) => execFile('curl', ['-sS', '-o', '/dev/null', '--fail', ...args], (err) => (err ? reject(err) : resolve()))),
    ),
  );
  return (performance.now() - t0) / 1000;
}

/** Runs `fn` while sampling the service's RSS every 20 ms; returns the result and the peak growth in bytes. */
export async function withRss<T>(svc: Service, fn: () => Promise<T> | T): Promise<{ value: T; growth: number }> {
  const base = svc.rssMb();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, svc.rssMb())), 20);
  try {
    const value = await fn();
    return { value, growth: (Math.max(peak, svc.rssMb()) - base) * MiB };
  } finally {
    clearInterval(timer);
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-dl-');
  const svc = await startService(adminEnv);
  const nginx = await startNginx(files.dir);
  try {
    chmodSync(files.dir, 0o755); // nginx workers may run as another user
    mkdirSync(join(files.dir, 'data'));
    await pipeline(noise(BYTES), createWriteStream(join(files.dir, 'data/big.bin')));
    const token = await mount(svc, 'Bench', join(files.dir, 'data'));
    const url = `${svc.url}/api/files/raw?path=/Bench/big.bin`;
    // Warm the page cache so both servers read from memory.
    execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', join(files.dir, 'data/big.bin')]);
    const ours: number[] = [];
    const anchor: number[] = [];
    let growth = 0;
    for (let i = 0; i < RUNS; i++) {
      if (nginx) anchor.push(await curls(CLIENTS, [`${nginx.url}/data/big.bin`]));
      const r = await withRss(svc, () => curls(CLIENTS, ['-H', `authorization: Bearer ${token}`, url]));
      ours.push(r.value);
      growth = Math.max(growth, r.growth);
    }
    const gbps = (s: number) => ((BYTES * CLIENTS) / s / 1e9).toFixed(2);
    const row = (server: string, xs: number[]) => ({
      server,
      'median s': median(xs).toFixed(2),
      'GB/s': gbps(median(xs)),
      runs: xs.map((x) => x.toFixed(2)).join(' '),
    });
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    table(`Raw download of ${BYTES / MiB} MiB over loopback, ${CLIENTS} client(s) at once, ${RUNS} alternating runs (load ${load})`, [
      ...(nginx ? [row('nginx sendfile', anchor)] : []),
      row('service /api/files/raw', ours),
    ]);
    if (nginx) {
      const ratio = median(anchor) / median(ours);
      console.log(`\nratio service / nginx: ${(ratio * 100).toFixed(0)} % (target >= 100 %) ${ratio >= 1 ? 'PASS' : 'FAIL'}`);
    }
    console.log(`service RSS growth during downloads: ${(growth / MiB).toFixed(0)} MiB (target < 100 MB) ${growth < 100e6 ? 'PASS' : 'FAIL'}`);
  } finally {
    nginx?.stop();
    await svc.stop();
    files.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
