/**
 * Two builds side by side (a regression check across commits): both services
 * run at once on the same machine and the same workloads alternate between
 * them, so load from elsewhere hits both alike. Workloads: a chunked upload
 * (8 MiB parts, 4 in flight, finalize included) and a download of the raw
 * route, AB_MIB each (default 1,024); 4 KiB raw downloads and first pages of a
 * 1,000-entry listing, 16 clients for 5 s each. Each tree must be built
 * (`node scripts/build.mjs --server-only`).
 *
 *   node --import tsx bench/ab.ts <tree A> <tree B>      (ROUNDS=6, AB_MIB=1024)
 */
import { spawn, execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, rmSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { cannon, freePort, median, noise, sleep, table } from './lib';

const MiB = 1 << 20,
  BYTES = Number(process.env.AB_MIB ?? 1024) * MiB,
  PART = 8 * MiB,
  PAR = 4;
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const ADMIN = { email: 'a@example.test', password: 'bench-password-1' };

async function start(root: string, cpuProf?: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ab-'));
  const port = await freePort();
  const args = [...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []), join(root, 'dist/server/cli.js'), 'serve'];
  const proc = spawn(process.execPath, args, {
    env: {
      ...process.env,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_LOG_LEVEL: 'warn',
      SERVICE_UPDATE_CHECK: '0',
      SERVICE_ADMIN_EMAIL: ADMIN.email,
      SERVICE_ADMIN_PASSWORD: ADMIN.password,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      if ((await fetch(`${url}/api/capabilities`)).ok) break;
    } catch {}
    await sleep(20);
  }
  const token = (
    await (await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()
  ).token;
  const store = join(dataDir, 'store');
  mkdirSync(store);
  const st = await fetch(`${url}/api/admin/storages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Bench', driver: 'local', config: { path: store }, sync_interval: '24h' }),
  });
  if (!st.ok) throw new Error(await st.text());
  // CPU seconds the service has used (user + system): far steadier than wall time on a shared machine.
  const cpu = () => {
    const f = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  return {
    url,
    token,
    store,
    cpu,
    stop: () =>
      new Promise((r) => {
        proc.once('exit', r);
        proc.kill('SIGINT');
      }),
  };
}
const call = async (url: string, token: string, body: unknown) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(await r.text());
  return r.json();
};
function part(base: string, token: string, id: string, n: number, src: string): Promise<any> {
  const start = (n - 1) * PART,
    end = Math.min(start + PART, BYTES) - 1;
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/api/files/upload/chunk?upload_id=${id}&part=${n}`,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': end - start + 1 } },
      (res) => {
        const c: Buffer[] = [];
        res.on('data', (x) => c.push(x));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(c).toString())) : reject(new Error(String(res.statusCode)))));
      },
    );
    req.on('error', reject);
    pipeline(createReadStream(src, { start, end, highWaterMark: MiB }), req).catch(reject);
  });
}
type Svc = Awaited<ReturnType<typeof start>>;

async function download(s: Svc, name: string) {
  const t0 = performance.now();
  const r = await fetch(`${s.url}/api/files/raw?path=/Bench/${name}`, { headers: { authorization: `Bearer ${s.token}` } });
  let n = 0;
  const reader = r.body!.getReader();
  for (let c = await reader.read(); !c.done; c = await reader.read()) n += c.value.length;
  if (n !== BYTES) throw new Error(`downloaded ${n} bytes`);
  return (performance.now() - t0) / 1000;
}

async function upload(s: Svc, src: string, name: string) {
  const t0 = performance.now();
  const init = await call(`${s.url}/api/files/upload/init`, s.token, { path: `/Bench/${name}`, size: BYTES, chunk_size: PART });
  const count = Math.ceil(BYTES / PART);
  let next = 1;
  const etags: any[] = [];
  await Promise.all(
    Array.from({ length: PAR }, async () => {
      while (next <= count) {
        const r = await part(s.url, s.token, init.upload_id, next++, src);
        etags.push({ part: r.part, etag: r.etag });
      }
    }),
  );
  await call(`${s.url}/api/files/upload/finalize`, s.token, { upload_id: init.upload_id, etags: etags.sort((a, b) => a.part - b.part) });
  const t = (performance.now() - t0) / 1000;
  rmSync(join(s.store, name), { force: true });
  return t;
}
const [a, b] = [process.argv[2], process.argv[3]];
const prof = process.env.PROF;
const A = await start(a, prof && join(prof, 'a')),
  B = await start(b, prof && join(prof, 'b'));
const src = join(mkdtempSync(join(tmpdir(), 'ab-src-')), 'src.bin');
await pipeline(noise(BYTES), createWriteStream(src));
execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', src]);
type Big = 'upload' | 'download';
const runs = { upload: [[], []] as number[][], download: [[], []] as number[][] };
const cpu = { upload: [[], []] as number[][], download: [[], []] as number[][] };
const SMALL = { '4 KiB raw': '/api/files/raw?path=/Bench/small.bin', '1,000-row page': '/api/files/manager?path=/Bench/many&limit=1000' };
type Small = keyof typeof SMALL;
const rates = { '4 KiB raw': [[], []], '1,000-row page': [[], []] } as Record<Small, number[][]>;
/** Runs `fn` on service `k`, recording its wall time and the service's CPU seconds. */
const timed = async (w: Big, k: number, fn: () => Promise<number>) => {
  const c0 = both[k].cpu();
  runs[w][k].push(await fn());
  cpu[w][k].push(both[k].cpu() - c0);
};
const both = [A, B];
await upload(A, src, 'w');
await upload(B, src, 'w');
for (const s of both) {
  execFileSync('cp', [src, join(s.store, 'dl.bin')]);
  writeFileSync(join(s.store, 'small.bin'), Buffer.alloc(4096, 7));
  mkdirSync(join(s.store, 'many'));
  for (let i = 0; i < 1000; i++) writeFileSync(join(s.store, 'many', `f${i}.txt`), `${i}`);
  // Catalogued before the rounds: the first listing of a new folder syncs it.
  await fetch(`${s.url}/api/files/manager?path=/Bench/many&limit=1000`, { headers: { authorization: `Bearer ${s.token}` } });
}
for (let i = 0; i < ROUNDS; i++) {
  // Alternate who goes first, so a slow moment falls on both.
  const order = i % 2 ? [1, 0] : [0, 1];
  for (const k of order) await timed('upload', k, () => upload(both[k], src, 'x'));
  for (const k of order) await timed('download', k, () => download(both[k], 'dl.bin'));
  for (const [w, path] of Object.entries(SMALL) as Array<[Small, string]>)
    for (const k of order) {
      const r = await cannon(`${both[k].url}${path}`, { connections: 16, seconds: 5, headers: { authorization: `Bearer ${both[k].token}` } });
      if (r.errors || r.non2xx) throw new Error(`${w}: ${r.errors} errors, ${r.non2xx} non-2xx`);
      rates[w][k].push(r.rps);
    }
}
const gbps = (s: number) => (BYTES / s / 1e9).toFixed(2);
table(
  `${BYTES / MiB} MiB, ${ROUNDS} alternating rounds, medians`,
  (['upload', 'download'] as const).flatMap((w) =>
    [0, 1].map((k) => ({
      workload: w,
      build: k ? `B ${b}` : `A ${a}`,
      'median s': median(runs[w][k]).toFixed(3),
      'GB/s': gbps(median(runs[w][k])),
      runs: runs[w][k].map((x) => x.toFixed(2)).join(' '),
      'service CPU s': median(cpu[w][k]).toFixed(2),
      'CPU runs': cpu[w][k].map((x) => x.toFixed(2)).join(' '),
    })),
  ),
);
table(
  `16 clients, 5 s each, ${ROUNDS} alternating rounds, medians`,
  (Object.keys(SMALL) as Small[]).flatMap((w) =>
    [0, 1].map((k) => ({ workload: w, build: k ? `B ${b}` : `A ${a}`, 'median req/s': median(rates[w][k]), runs: rates[w][k].join(' ') })),
  ),
);
const more = (xs: number[][]) => ((median(xs[1]) / median(xs[0]) - 1) * 100).toFixed(1);
for (const w of ['upload', 'download'] as const) console.log(`${w}: B takes ${more(runs[w])} % more time and ${more(cpu[w])} % more service CPU than A`);
for (const w of Object.keys(SMALL) as Small[]) console.log(`${w}: B serves ${more(rates[w])} % more requests per second than A`);
await A.stop();
await B.stop();
rmSync(src);
