/**
 * Share-link downloads. (1) Throughput: `GET /s/{token}` of a 2 GiB file
 * against this service's own `GET /api/files/raw` of the same file, curl
 * draining both to /dev/null, alternating runs, medians. Target: the link at
 * least 90 % of the raw route. (2) The download cap stays exact: 200
 * concurrent requests at a link capped at N yield exactly N successes, over
 * several rounds and caps.
 *
 *   node --import tsx bench/share-download.ts     (BENCH_RUNS=5, BENCH_MIB=2048, BENCH_CAP_ROUNDS=5)
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { get } from 'node:http';
import { adminEnv, curl, mount } from './download';
import { ensureBuilt, median, noise, startService, table, type Service } from './lib';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;
const CAP_ROUNDS = Number(process.env.BENCH_CAP_ROUNDS ?? 5);
const CONCURRENT = 200;

/** Creates a link as the signed-in admin; returns its token. */
export async function createLink(svc: Service, bearer: string, body: Record<string, unknown>): Promise<{ id: number; token: string }> {
  const post = () =>
    fetch(`${svc.url}/api/files/share`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify(body),
    });
  // A keep-alive socket the server closes while idle can fail the next request once; a second try opens a new one.
  const r = await post().catch(post);
  if (r.status !== 200) throw new Error(`share: ${r.status} ${await r.text()}`);
  return (await r.json()) as { id: number; token: string };
}

async function throughput(svc: Service, bearer: string, dir: string): Promise<void> {
  const link = await createLink(svc, bearer, { path: '/Bench/big.bin' });
  // Let the writeback of the fresh file finish, then read it once so both routes are served from the page cache.
  execFileSync('sh', ['-c', 'sync && cat "$1" > /dev/null', 'sh', join(dir, 'big.bin')]);
  const raw: number[] = [];
  const shared: number[] = [];
  // One untimed pair first: the first transfers after a big write pay for memory reclaim, not for the route.
  curl([`${svc.url}/s/${link.token}`]);
  curl(['-H', `authorization: Bearer ${bearer}`, `${svc.url}/api/files/raw?path=/Bench/big.bin`]);
  for (let i = 0; i < RUNS; i++) {
    raw.push(curl(['-H', `authorization: Bearer ${bearer}`, `${svc.url}/api/files/raw?path=/Bench/big.bin`]));
    shared.push(curl([`${svc.url}/s/${link.token}`]));
  }
  const gbps = (s: number) => (BYTES / s / 1e9).toFixed(2);
  const row = (route: string, xs: number[]) => ({
    route,
    'median s': median(xs).toFixed(2),
    'GB/s': gbps(median(xs)),
    runs: xs.map((x) => x.toFixed(2)).join(' '),
  });
  table(`Download of ${BYTES / MiB} MiB over loopback, ${RUNS} alternating runs (curl to /dev/null)`, [
    row('GET /api/files/raw (anchor)', raw),
    row('GET /s/{token}', shared),
  ]);
  const ratio = median(raw) / median(shared);
  console.log(`\nshare link / raw route: ${(ratio * 100).toFixed(0)} % (target >= 90 %) ${ratio >= 0.9 ? 'PASS' : 'FAIL'}`);
}

async function cap(svc: Service, bearer: string): Promise<void> {
  const rows: Array<Record<string, string | number>> = [];
  let exact = true;
  for (let round = 0; round < CAP_ROUNDS; round++) {
    const n = [1, 7, 50, 199, 13][round % 5];
    const link = await createLink(svc, bearer, { path: '/Bench/small.bin', max_downloads: n });
    const t0 = performance.now();
    const codes = await Promise.all(Array.from({ length: CONCURRENT }, () => download(`${svc.url}/s/${link.token}`)));
    const ms = performance.now() - t0;
    const ok = codes.filter((c) => c === 200).length;
    const others = codes.filter((c) => c !== 200 && c !== 404).length;
    exact &&= ok === n && others === 0;
    rows.push({
      round: round + 1,
      cap: n,
      '200s': ok,
      '404s': codes.filter((c) => c === 404).length,
      other: others,
      'wall ms': ms.toFixed(0),
      exact: ok === n ? 'yes' : 'NO',
    });
  }
  table(`Download cap under ${CONCURRENT} concurrent requests (4 KiB file)`, rows);
  console.log(`\ncap exact in every round: ${exact ? 'PASS' : 'FAIL'}`);
}

/** One GET on its own connection (so the 200 really race on the server); 200 only for the whole 4 KiB body. */
function download(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(res.statusCode === 200 && n === 4096 ? 200 : (res.statusCode ?? 0)));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-sharedl-');
  const svc = await startService(adminEnv);
  try {
    await pipeline(noise(BYTES), createWriteStream(join(files.dir, 'big.bin')));
    writeFileSync(join(files.dir, 'small.bin'), Buffer.alloc(4096, 1));
    const bearer = await mount(svc, 'Bench', files.dir);
    await throughput(svc, bearer, files.dir);
    await cap(svc, bearer);
  } finally {
    await svc.stop();
    files.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
