/**
 * What publishing a finished 2 GiB chunked upload costs on a local storage,
 * for the two places its staged file can live (docs/files-api.md):
 *   - on the storage's filesystem (the data dir when it shares it, else the
 *     root's hidden `.service-staging/`): fsync the file, rename it into
 *     place, fsync the folder; this is what LocalMultipart.complete does;
 *   - on another filesystem (a data dir on a tmpfs here, the storage on the
 *     disk): copy it into a temp file beside the target, fsync, rename, fsync
 *     the folder, the only way to publish across filesystems.
 * Alternating runs, medians; the rename is the anchor of the same run.
 *
 *   npm run bench -- staging-finalize      (BENCH_RUNS=3, BENCH_MIB=2048; needs root for the tmpfs)
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, promises as fsp, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { median, noise, table } from './lib';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;

async function stage(path: string): Promise<void> {
  await pipeline(noise(BYTES), createWriteStream(path, { highWaterMark: MiB }));
  const fh = await fsp.open(path, 'r+');
  await fh.datasync().finally(() => fh.close());
}

async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  await fh.sync().finally(() => fh.close());
}

/** Same filesystem: what complete() does today. */
async function renameInto(staged: string, target: string): Promise<number> {
  const t0 = performance.now();
  const fh = await fsp.open(staged, 'r+');
  await fh.sync().finally(() => fh.close());
  await fsp.rename(staged, target);
  await syncDir(join(target, '..'));
  return (performance.now() - t0) / 1000;
}

/** Another filesystem: copy beside the target, fsync, rename, fsync the folder. */
async function copyInto(staged: string, target: string): Promise<number> {
  const t0 = performance.now();
  const temp = join(target, '..', `.~fd-${Date.now()}`);
  await fsp.copyFile(staged, temp);
  const fh = await fsp.open(temp, 'r+');
  await fh.sync().finally(() => fh.close());
  await fsp.rename(temp, target);
  await syncDir(join(target, '..'));
  await fsp.rm(staged);
  return (performance.now() - t0) / 1000;
}

const disk = tempDir('filedock-bench-stage-');
const other = tempDir('filedock-bench-stage-tmpfs-');
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${Math.ceil(BYTES / MiB) + 64}m`, 'tmpfs', other.dir]);
  mounted = true;
  mkdirSync(join(disk.dir, 'store'));
  mkdirSync(join(disk.dir, 'staging'));
  const same: number[] = [];
  const copy: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await stage(join(disk.dir, 'staging', 'data'));
    same.push(await renameInto(join(disk.dir, 'staging', 'data'), join(disk.dir, 'store', `same-${i}.bin`)));
    rmSync(join(disk.dir, 'store', `same-${i}.bin`));
    await stage(join(other.dir, 'data'));
    copy.push(await copyInto(join(other.dir, 'data'), join(disk.dir, 'store', `copy-${i}.bin`)));
    rmSync(join(disk.dir, 'store', `copy-${i}.bin`));
  }
  const row = (what: string, xs: number[]) => ({ what, 'median s': median(xs).toFixed(3), runs: xs.map((x) => x.toFixed(3)).join(' ') });
  table(`Publishing a finished ${BYTES / MiB} MiB upload, ${RUNS} alternating runs`, [
    row('anchor: staged on the same filesystem (fsync + rename)', same),
    row('staged on another filesystem (copy + fsync + rename)', copy),
  ]);
  console.log(`\ncopy / rename: ${(median(copy) / median(same)).toFixed(0)} x`);
} finally {
  if (mounted) execFileSync('umount', [other.dir]);
  other.cleanup();
  disk.cleanup();
}
