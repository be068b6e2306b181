/**
 * Chunked upload throughput: a 2 GiB file sent through
 * /api/files/upload/{init,chunk,finalize} in 8 MiB parts, 4 in flight,
 * finalize included, against nginx's WebDAV PUT of the same file (curl -T),
 * alternating runs, medians. Also reports finalize time (target < 1 s: the
 * local driver publishes with a rename) and the service's RSS growth (target
 * < 100 MB). Target: service >= 60 % of nginx.
 *
 *   node --import tsx bench/upload.ts        (BENCH_RUNS=3, BENCH_MIB=2048)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, createReadStream, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, median, noise, startNginx, startService, table } from './lib';
import { adminEnv, curl, mount, withRss } from './download';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;
const PART = 8 * MiB;
const PARALLEL = 4;

async function call(url: string, token: string, body: unknown): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** Streams one part from the source file straight into the request body. */
function sendPart(base: string, token: string, id: string, part: number, src: string, size: number): Promise<{ part: number; etag: string }> {
  const start = (part - 1) * PART;
  const end = Math.min(start + PART, size) - 1;
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/api/files/upload/chunk?upload_id=${id}&part=${part}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': end - start + 1 },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(JSON.parse(Buffer.concat(chunks).toString()))
            : reject(new Error(`part ${part}: ${res.statusCode} ${Buffer.concat(chunks)}`)),
        );
      },
    );
    req.on('error', reject);
    createReadStream(src, { start, end, highWaterMark: MiB }).pipe(req);
  });
}

async function upload(base: string, token: string, src: string, target: string): Promise<{ total: number; finalize: number }> {
  const t0 = performance.now();
  const init = await call(`${base}/api/files/upload/init`, token, { path: target, size: BYTES, mime: 'application/octet-stream', chunk_size: PART });
  const count = Math.ceil(BYTES / init.chunk_size);
  const etags: Array<{ part: number; etag: string }> = [];
  let next = 1;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next <= count) {
        const r = await sendPart(base, token, init.upload_id, next++, src, BYTES);
        etags.push({ part: r.part, etag: r.etag });
      }
    }),
  );
  const f0 = performance.now();
  await call(`${base}/api/files/upload/finalize`, token, { upload_id: init.upload_id, etags: etags.sort((a, b) => a.part - b.part) });
  const end = performance.now();
  return { total: (end - t0) / 1000, finalize: (end - f0) / 1000 };
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-up-');
  const dav = join(files.dir, 'dav');
  mkdirSync(dav);
  // nginx workers may run as another user: they must reach the tree and write into dav/.
  chmodSync(files.dir, 0o755);
  chmodSync(dav, 0o777);
  mkdirSync(join(files.dir, 'davtmp'), { mode: 0o777 });
  chmodSync(join(files.dir, 'davtmp'), 0o777);
  mkdirSync(join(files.dir, 'store'));
  const svc = await startService(adminEnv);
  const nginx = await startNginx(
    files.dir,
    `location /dav/ { dav_methods PUT; client_max_body_size 0; client_body_buffer_size 1m; client_body_temp_path ${join(files.dir, 'davtmp')}; }`,
  );
  try {
    const src = join(files.dir, 'source.bin');
    await pipeline(noise(BYTES), createWriteStream(src));
    execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', src]);
    const token = await mount(svc, 'Bench', join(files.dir, 'store'));
    const ours: number[] = [];
    const finals: number[] = [];
    const anchor: number[] = [];
    let growth = 0;
    for (let i = 0; i < RUNS; i++) {
      if (nginx) {
        anchor.push(curl(['-T', src, `${nginx.url}/dav/up-${i}.bin`]));
        rmSync(join(dav, `up-${i}.bin`), { force: true });
      }
      const r = await withRss(svc, () => upload(svc.url, token, src, `/Bench/up-${i}.bin`));
      ours.push(r.value.total);
      finals.push(r.value.finalize);
      growth = Math.max(growth, r.growth);
      rmSync(join(files.dir, 'store', `up-${i}.bin`), { force: true });
    }
    const gbps = (s: number) => (BYTES / s / 1e9).toFixed(2);
    const row = (server: string, xs: number[]) => ({
      server,
      'median s': median(xs).toFixed(2),
      'GB/s': gbps(median(xs)),
      runs: xs.map((x) => x.toFixed(2)).join(' '),
    });
    table(`Upload of ${BYTES / MiB} MiB over loopback, ${RUNS} alternating runs`, [
      ...(nginx ? [row('nginx WebDAV PUT (curl -T)', anchor)] : []),
      row(`service chunked, ${PART / MiB} MiB x ${PARALLEL}, with finalize`, ours),
    ]);
    if (nginx) {
      const ratio = median(anchor) / median(ours);
      console.log(`\nratio service / nginx: ${(ratio * 100).toFixed(0)} % (target >= 60 %) ${ratio >= 0.6 ? 'PASS' : 'FAIL'}`);
    }
    console.log(`finalize median: ${(median(finals) * 1000).toFixed(0)} ms (target < 1 s) ${median(finals) < 1 ? 'PASS' : 'FAIL'}`);
    console.log(`service RSS growth during uploads: ${(growth / MiB).toFixed(0)} MiB (target < 100 MB) ${growth < 100e6 ? 'PASS' : 'FAIL'}`);
  } finally {
    nginx?.stop();
    await svc.stop();
    files.cleanup();
  }
}

await main();
