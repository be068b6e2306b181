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
import { basename, join } from 'node:path';
import sharp from 'sharp';
import { startTestServer } from '../test/helpers/server';
import { tempDir } from '../test/helpers/tools';
import { median, sleep, table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IMAGES = Number(process.env.BENCH_IMAGES ?? 200);
const DISTINCT = 20;
const CONCURRENCY = 2;

async function fixtures(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < DISTINCT; i++) {
    // Smooth photographic-like content: upscaled noise (a flat colour would decode unrealistically fast).
    const small = await sharp({
      create: { width: 400, height: 300, channels: 3, background: { r: 40 * (i % 6), g: 90, b: 160 }, noise: { type: 'gaussian', mean: 120, sigma: 50 } },
    })
      .png()
      .toBuffer();
    await sharp(small)
      .resize(4000, 3000)
      .jpeg({ quality: 90 })
      .toFile(join(dir, `img-${i}.jpg`));
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

interface Rate {
  rate: number;
  /** CPU time (user + system, every thread) per image: unlike the rate, hardly moved by other load on the machine. */
  cpuMs: number;
}

/** `times` after the command prints the children's user and system time (POSIX sh). */
const cpuOfTimes = (out: string): number => {
  const [user, sys] = out
    .trim()
    .split('\n')[1]
    .split(' ')
    .map((t) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(t)!;
      return Number(m[1]) * 60 + Number(m[2]);
    });
  return (user + sys) * 1000;
};

function vips(files: string[], out: string): Promise<Rate> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  const t0 = performance.now();
  const groups = Array.from({ length: CONCURRENCY }, (_, g) => files.filter((_, i) => i % CONCURRENCY === g));
  return Promise.all(
    groups.map(
      (g) =>
        new Promise<number>((resolve, reject) => {
          const p = spawn('sh', ['-c', '"$@"; s=$?; times; exit $s', 'sh', 'vipsthumbnail', '-s', '320', '-o', `${out}/%s.jpg[Q=80]`, ...g], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let text = '';
          p.stdout.on('data', (c: Buffer) => (text += c));
          p.on('close', (code) => (code === 0 ? resolve(cpuOfTimes(text)) : reject(new Error(`vipsthumbnail exited ${code}`))));
        }),
    ),
  ).then((cpu) => {
    if (readdirSync(out).length !== files.length) throw new Error('vipsthumbnail missed files');
    return { rate: files.length / ((performance.now() - t0) / 1000), cpuMs: cpu.reduce((a, b) => a + b, 0) / files.length };
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
    const db = s.server.db.sqlite!;
    while ((db.prepare("SELECT count(*) AS n FROM nodes WHERE storage_id = ? AND type = 'file'").get(storageId) as { n: number }).n < IMAGES) await sleep(20);
    const driver = await s.server.catalogue.driverFor(storageId);
    const entries = await Promise.all(files.map((f) => driver.stat(basename(f)).then((e) => [basename(f), e] as const)));
    const listUrl = `${s.url}/api/files/manager?path=/Bench&limit=100`;
    const probe = await fetch(listUrl, { headers: { authorization: `Bearer ${token}` } });
    if (probe.status !== 200) throw new Error(`listing answered ${probe.status}`);

    const ours = async (listing: boolean): Promise<Rate & { p99: number; n: number }> => {
      db.prepare('UPDATE nodes SET thumb_state = NULL WHERE storage_id = ?').run(storageId);
      for (const f of readdirSync(s.server.dirs.thumbs)) if (f.endsWith('.jpg')) rmSync(join(s.server.dirs.thumbs, f));
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
      // The writes go through the real gate while background work is paused; the clock starts at resume.
      s.server.pause(true);
      for (const [name, entry] of entries) await s.server.catalogue.gate.written(storageId, name, entry, { origin: 'copy' });
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      s.server.pause(false);
      const ready = db.prepare("SELECT count(*) AS n FROM nodes WHERE storage_id = ? AND thumb_state = 'ready'");
      while ((ready.get(storageId) as { n: number }).n < IMAGES) await sleep(5);
      const secs = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      done = true;
      await lister;
      lat.sort((a, b) => a - b);
      return { rate: IMAGES / secs, cpuMs: (cpu.user + cpu.system) / 1000 / IMAGES, p99: lat.length ? lat[Math.floor(lat.length * 0.99)] : 0, n: lat.length };
    };

    const rows: Array<Record<string, string | number>> = [];
    const anchor: Rate[] = [];
    const mine: Rate[] = [];
    for (let i = 0; i < RUNS; i++) {
      // Alternate which side goes first, so a drift of the machine's load favours neither.
      if (i % 2 === 0) anchor.push(await vips(files, join(dir, 'vips-out')));
      mine.push(await ours(false));
      if (i % 2 === 1) anchor.push(await vips(files, join(dir, 'vips-out')));
      rows.push({
        run: i + 1,
        'vipsthumbnail img/s': anchor[i].rate.toFixed(1),
        'filedock img/s': mine[i].rate.toFixed(1),
        ratio: `${((mine[i].rate / anchor[i].rate) * 100).toFixed(0)} %`,
        'vips cpu ms/img': anchor[i].cpuMs.toFixed(1),
        'filedock cpu ms/img': mine[i].cpuMs.toFixed(1),
        'listing p99 ms': '-',
        listings: 0,
      });
    }
    const l = await ours(true);
    rows.push({
      run: 'with listing',
      'vipsthumbnail img/s': '-',
      'filedock img/s': l.rate.toFixed(1),
      ratio: '-',
      'vips cpu ms/img': '-',
      'filedock cpu ms/img': l.cpuMs.toFixed(1),
      'listing p99 ms': l.p99.toFixed(1),
      listings: l.n,
    });
    table(`thumbnails of ${IMAGES} 4000x3000 JPEGs, concurrency ${CONCURRENCY}`, rows);
    const rate = (xs: Rate[]) => median(xs.map((x) => x.rate));
    const ratio = rate(mine) / rate(anchor);
    const paired = median(mine.map((m, i) => m.rate / anchor[i].rate));
    const cpu = median(anchor.map((a) => a.cpuMs)) / median(mine.map((m) => m.cpuMs));
    console.log(
      `\nmedian: vipsthumbnail ${rate(anchor).toFixed(1)} img/s, filedock ${rate(mine).toFixed(1)} img/s = ${(ratio * 100).toFixed(0)} % (target >= 120 %); median of the paired rounds ${(paired * 100).toFixed(0)} %`,
    );
    console.log(
      `CPU per image: vipsthumbnail ${median(anchor.map((a) => a.cpuMs)).toFixed(1)} ms, filedock ${median(mine.map((m) => m.cpuMs)).toFixed(1)} ms (filedock does ${(cpu * 100).toFixed(0)} % of the anchor's work rate per CPU second)`,
    );
    console.log(`listing p99 during the run ${l.p99.toFixed(1)} ms over ${l.n} listings (target < 50 ms)`);
  } finally {
    await s.close();
    cleanup();
  }
}

await main();
