/**
 * ZIP creation speed: `ZipWriter` (store for compressed types, deflate level 1
 * for the rest) against `zip -r -1` on the same mixed tree, alternating,
 * medians. Target: >= 150 % of zip's speed.
 *
 *   node --import tsx bench/zip.ts        (BENCH_RUNS=3, BENCH_MIB=1024)
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { shouldCompress } from '../server/archives';
import { ZipWriter } from '../server/lib/zip-writer';
import { tempDir } from '../test/helpers/tools';
import { median, table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MIB = Number(process.env.BENCH_MIB ?? 1024);
const WORDS = 'alpha beta gamma delta file share storage sync thumbnail archive 2024 1337 report invoice total amount'.split(' ');

/** Half the bytes incompressible media, half text-like (CSV lines of words and numbers). */
function makeTree(root: string): number {
  let bytes = 0;
  let i = 0;
  while (bytes < MIB * 1048576) {
    const media = i % 2 === 0;
    const size = 8 * 1048576;
    let data: Buffer;
    if (media) data = randomBytes(size);
    else {
      const lines: string[] = [];
      let n = 0;
      while (n < size) {
        const line = `${i},${n},${WORDS[(n * 7 + i) % WORDS.length]},${WORDS[(n * 13) % WORDS.length]},${(n * 31) % 100000}.${n % 100}\n`;
        lines.push(line);
        n += line.length;
      }
      data = Buffer.from(lines.join('')).subarray(0, size);
    }
    mkdirSync(join(root, `d${i % 8}`), { recursive: true });
    writeFileSync(join(root, `d${i % 8}`, media ? `clip-${i}.mp4` : `data-${i}.csv`), data);
    bytes += size;
    i++;
  }
  return bytes;
}

async function ours(root: string, out: string): Promise<number> {
  const t0 = performance.now();
  const zip = new ZipWriter(createWriteStream(out, { highWaterMark: 1 << 20 }));
  for (const d of readdirSync(root).sort()) {
    await zip.addDir(d);
    for (const f of readdirSync(join(root, d)).sort()) {
      const p = join(root, d, f);
      const st = statSync(p);
      await zip.addFile(`${d}/${f}`, createReadStream(p, { highWaterMark: 1 << 20 }), { size: st.size, mtime: st.mtimeMs, compress: shouldCompress(f) });
    }
  }
  await zip.finish();
  return performance.now() - t0;
}

function zipCli(root: string, out: string): number {
  const t0 = performance.now();
  execFileSync('zip', ['-q', '-r', '-1', out, '.'], { cwd: root });
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const { dir, cleanup } = tempDir('filedock-bench-zip-');
  try {
    const root = join(dir, 'tree');
    const bytes = makeTree(root);
    const mbps = (ms: number) => bytes / 1e6 / (ms / 1000);
    const a: number[] = [];
    const b: number[] = [];
    const rows: Array<Record<string, string | number>> = [];
    for (let i = 0; i < RUNS; i++) {
      const zOut = join(dir, 'cli.zip');
      const oOut = join(dir, 'ours.zip');
      a.push(mbps(zipCli(root, zOut)));
      b.push(mbps(await ours(root, oOut)));
      rows.push({
        run: i + 1,
        'zip -r -1 MB/s': a[i].toFixed(0),
        'ZipWriter MB/s': b[i].toFixed(0),
        'zip size MB': (statSync(zOut).size / 1e6).toFixed(0),
        'ours size MB': (statSync(oOut).size / 1e6).toFixed(0),
      });
      if (i === 0) execFileSync('unzip', ['-tq', oOut]);
      rmSync(zOut);
      rmSync(oOut);
    }
    table(`ZIP creation of ${(bytes / 1048576).toFixed(0)} MiB (half media, half CSV)`, rows);
    console.log(
      `\nmedian: zip -r -1 ${median(a).toFixed(0)} MB/s, ZipWriter ${median(b).toFixed(0)} MB/s = ${((median(b) / median(a)) * 100).toFixed(0)} % (target >= 150 %)`,
    );
  } finally {
    cleanup();
  }
}

await main();
