/**
 * Thumbnail throughput, end to end through the dispatcher: 200 generated
 * 4000x3000 JPEGs on a local storage are dispatched as `thumb` ops (state rows
 * pending → ready, JPEGs in the cache) on a real server, against the anchor
 * `vipsthumbnail` (Debian libvips-tools) with the same concurrency (2
 * processes), alternating, medians. Target: >= 120 % of the anchor. A last
 * run repeats ours while a browser-like client lists the folder every 50 ms
 * (target: listing p99 under 50 ms); the lister shares this process with the
 * server, so that run's rate is reported but not used for the ratio.
 *
 *   node --import tsx bench/thumbs.ts        (BENCH_RUNS=3, BENCH_IMAGES=200)
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer } from '../test/helpers/server';
import { tempDir } from '../test/helpers/tools';
import { ThumbService } from '../server/thumbs';
import { createLogger } from '../server/lib/log';
import { median, sleep, table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IMAGES = Number(process.env.BENCH_IMAGES ?? 200);
const DISTINCT = 20;
const CONCURRENCY = 2;

async function fixtures(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < DISTINCT; i++) {
    // Smooth photographic-like content: upscaled noise (a flat colour would decode unrealistically fast).
    const small = await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: 40 * (i % 6), g: 90, b: 160 }, noise: { type: 'gaussian', mean: 120, sigma: 50 } } }).png().toBuffer();
    await sharp(small).resize(4000, 3000).jpeg({ quality: 90 }).toFile(join(dir, `img-${i}.jpg`));
  }
  for (let i = 0; i < IMAGES; i++) {
    const name = `photo-${String(i).padStart(3, '0')}.jpg`;
    if (i >= DISTINCT) copyFileSync(join(dir, `img-${i % DISTINCT}.jpg`), join(dir, name));
    else copyFileSync(join(dir, `img-${i}.jpg`), join(dir, name));
    names.push(name);
  }
  for (let i = 0; i < DISTINCT; i++) rmSync(join(dir, `img-${i}.jpg`));
  return names;
}

function vips(files: string[], out: string): Promise<number> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  const t0 = performance.now();
  const groups = Array.from({ length: CONCURRENCY }, (_, g) => files.filter((_, i) => i % CONCURRENCY === g));
  return Promise.all(
    groups.map((g) => new Promise<void>((resolve, reject) => {
      const p = spawn('vipsthumbnail', ['-s', '320', '-o', `${out}/%s.jpg[Q=80]`, ...g], { stdio: 'inherit' });
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`vipsthumbnail exited ${code}`))));
    })),
  ).then(() => {
    if (readdirSync(out).length !== files.length) throw new Error('vipsthumbnail missed files');
    return files.length / ((performance.now() - t0) / 1000);
  });
}

async function main(): Promise<void> {
  const { dir, cleanup } = tempDir('filedock-bench-thumbs-');
  const root = join(dir, 'photos');
  mkdirSync(root);
  const files = (await fixtures(root)).map((n) => join(root, n));
  const s = await startTestServer({ SERVICE_THUMBS_SWEEP_INTERVAL: '0' });
  try {
    const token = await s.login();
    const r = await s.api('POST', '/api/admin/storages', { token, body: { name: 'Bench', driver: 'local', config: { path: root } } });
    const storageId = r.body.id as number;
    const db = s.server.db.sqlite;
    while ((db.prepare("SELECT count(*) AS n FROM nodes WHERE storage_id = ? AND type = 'file'").get(storageId) as { n: number }).n < IMAGES) await sleep(20);
    const dispatcher = new ThumbService(s.server.db, s.server.catalogue, s.server.dirs.thumbs, createLogger('error'));
    const hook = dispatcher.writeHook(s.server.queue);
    const listUrl = `${s.url}/api/files/manager?path=/Bench&limit=100`;
    const probe = await fetch(listUrl, { headers: { authorization: `Bearer ${token}` } });
    if (probe.status !== 200) throw new Error(`listing answered ${probe.status}`);

    const ours = async (listing: boolean): Promise<{ rate: number; p99: number; n: number }> => {
      db.prepare('UPDATE nodes SET thumb_state = NULL WHERE storage_id = ?').run(storageId);
      for (const f of readdirSync(s.server.dirs.thumbs)) if (f.endsWith('.jpg')) rmSync(join(s.server.dirs.thumbs, f));
      const nodes = db.prepare("SELECT * FROM nodes WHERE storage_id = ? AND type = 'file'").all(storageId) as never[];
      const lat: number[] = [];
      let done = false;
      const lister = (async () => {
        while (listing && !done) {
          await sleep(50);
          const t = performance.now();
          const res = await fetch(listUrl, { headers: { authorization: `Bearer ${token}` } });
          await res.arrayBuffer();
          lat.push(performance.now() - t);
        }
      })();
      const t0 = performance.now();
      for (const n of nodes) hook({ ...(n as object), storageName: 'Bench' } as never, { origin: 'copy' });
      const ready = db.prepare("SELECT count(*) AS n FROM nodes WHERE storage_id = ? AND thumb_state = 'ready'");
      while ((ready.get(storageId) as { n: number }).n < IMAGES) await sleep(5);
      const secs = (performance.now() - t0) / 1000;
      done = true;
      await lister;
      lat.sort((a, b) => a - b);
      return { rate: IMAGES / secs, p99: lat.length ? lat[Math.floor(lat.length * 0.99)] : 0, n: lat.length };
    };

    const rows: Array<Record<string, string | number>> = [];
    const anchor: number[] = [];
    const mine: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      anchor.push(await vips(files, join(dir, 'vips-out')));
      const o = await ours(false);
      mine.push(o.rate);
      rows.push({ run: i + 1, 'vipsthumbnail img/s': anchor[i].toFixed(1), 'filedock img/s': o.rate.toFixed(1), 'listing p99 ms': '-', listings: 0 });
    }
    const l = await ours(true);
    rows.push({ run: 'with listing', 'vipsthumbnail img/s': '-', 'filedock img/s': l.rate.toFixed(1), 'listing p99 ms': l.p99.toFixed(1), listings: l.n });
    table(`thumbnails of ${IMAGES} 4000x3000 JPEGs, concurrency ${CONCURRENCY}`, rows);
    const ratio = median(mine) / median(anchor);
    console.log(`\nmedian: vipsthumbnail ${median(anchor).toFixed(1)} img/s, filedock ${median(mine).toFixed(1)} img/s = ${(ratio * 100).toFixed(0)} % (target >= 120 %); listing p99 during the run ${l.p99.toFixed(1)} ms (target < 50 ms)`);
  } finally {
    await s.close();
    cleanup();
  }
}

await main();
