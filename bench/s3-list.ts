/**
 * S3 sync cost: the driver's flat `walk('')` over 10,000 objects in nested
 * folders against a folder-by-folder walk built on `list()`, counting the
 * ListObjectsV2 requests each sends (target: about 10, i.e. 1,000 keys a
 * page, not one per folder). Then a 1 GiB streamed upload through `write`,
 * reporting peak RSS growth (target: under 100 MB, memory flat).
 *
 *   node --import tsx bench/s3-list.ts      (BENCH_OBJECTS=10000, BENCH_UPLOAD_MIB=1024; 0 skips the upload)
 *
 * The objects are placed in s3rver's data dir directly (PUTs cost ~10 ms each
 * there); the walks go through the S3 API like any sync.
 */
import type { S3Driver } from '../server/storage/drivers/s3';
import { createS3Driver } from '../server/storage/drivers/s3/factory';
import { countS3Commands, seedObjects, startS3rver, s3rverConfig } from '../test/helpers/s3rver';
import { table, noise } from './lib';

const MiB = 1024 * 1024;
const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 10_000);
const UPLOAD_BYTES = Number(process.env.BENCH_UPLOAD_MIB ?? 1024) * MiB;

/**
 * `n` files spread as top/sub/file, ten top folders of ten sub-folders each,
 * plus the `.empty` marker the driver's mkdir leaves in each folder (s3rver
 * omits a common prefix that holds only deeper keys, so the folder-by-folder
 * walk needs them; real S3 does not).
 */
function* tree(n: number): Generator<{ key: string; body: string }> {
  for (let t = 0; t < 10; t++) {
    yield { key: `bench/root/t${t}/.empty`, body: '' };
    for (let s = 0; s < 10; s++) yield { key: `bench/root/t${t}/s${s}/.empty`, body: '' };
  }
  for (let i = 0; i < n; i++) yield { key: `bench/root/t${i % 10}/s${Math.floor(i / 10) % 10}/f${i}.dat`, body: `object ${i}` };
}

/** The fallback a sync without `walk` would use: one listing per folder. */
async function walkByFolder(driver: S3Driver, dir: string): Promise<number> {
  let n = 0;
  const subdirs: string[] = [];
  for await (const e of driver.list(dir)) {
    n++;
    if (e.type === 'dir') subdirs.push(dir ? `${dir}/${e.name}` : e.name);
  }
  for (const d of subdirs) n += await walkByFolder(driver, d);
  return n;
}

async function main(): Promise<void> {
  const server = await startS3rver({ bucket: 'bench' });
  const driver = createS3Driver(s3rverConfig(server, 'bench/root'));
  const counts = countS3Commands(driver.client);
  try {
    const t0 = performance.now();
    const keys = seedObjects(server, tree(OBJECTS));
    console.log(`seeded ${keys} keys (${OBJECTS} files + folder markers) in ${Math.round(performance.now() - t0)} ms`);

    const rows: Array<Record<string, string | number>> = [];
    const measure = async (how: string, run: () => Promise<number>) => {
      counts.clear();
      const t = performance.now();
      const entries = await run();
      rows.push({ walk: how, entries, 'ListObjectsV2 requests': counts.get('ListObjectsV2Command') ?? 0, ms: Math.round(performance.now() - t) });
    };
    await measure("flat walk('')", async () => {
      let n = 0;
      for await (const _ of driver.walk('')) n++;
      return n;
    });
    await measure('folder by folder (list)', () => walkByFolder(driver, ''));
    table(`S3 sync listing, ${OBJECTS} objects in ${10 + 100} folders (s3rver, loopback)`, rows);

    if (UPLOAD_BYTES > 0) {
      await driver.mkdir('up');
      const base = process.memoryUsage.rss();
      let peak = base;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 25);
      counts.clear();
      const t = performance.now();
      const e = await driver.write('up/big.bin', noise(UPLOAD_BYTES), { size: UPLOAD_BYTES });
      const secs = (performance.now() - t) / 1000;
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      table('Streamed upload through write()', [
        {
          bytes: e.size,
          parts: counts.get('UploadPartCommand') ?? 0,
          s: secs.toFixed(1),
          'MB/s': (UPLOAD_BYTES / 1e6 / secs).toFixed(0),
          'peak RSS growth MB': ((peak - base) / 1e6).toFixed(0),
        },
      ]);
    }
  } finally {
    await driver.close();
    await server.close();
  }
}

await main();
