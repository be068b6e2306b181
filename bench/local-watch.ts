/**
 * `npm run bench -- local-watch`: what watching a local tree (`sync_mode: fsnotify`) costs: the heap it
 * keeps and the time to be ready, for BENCH_FILES files in BENCH_FOLDERS folders (defaults 50,000 in 500),
 * and the delay from a write to its report. Run with `--expose-gc` semantics through global.gc when present.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/helpers/tools';
import { watchLocal } from '../server/storage/drivers/local/local.watch';

const files = Number(process.env.BENCH_FILES ?? 50_000);
const folders = Number(process.env.BENCH_FOLDERS ?? 500);
const gc = () => (globalThis as { gc?: () => void }).gc?.();

const { dir, cleanup } = tempDir('filedock-bench-watch-');
// Watches do not keep the process alive (persistent: false): this does, while the bench waits for reports.
const alive = setInterval(() => undefined, 1000);
try {
  for (let f = 0; f < folders; f++) {
    mkdirSync(join(dir, `d${f}`));
    for (let i = 0; i < files / folders; i++) writeFileSync(join(dir, `d${f}`, `f${i}.txt`), 'x');
  }
  gc();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  let seen: ((paths: string[]) => void) | null = null;
  const stop = await watchLocal(dir, (paths) => seen?.(paths), { debounceMs: 50 });
  const readyMs = performance.now() - t0;
  gc();
  const heapMb = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  const delays: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const got = new Promise<void>((r) => (seen = () => r()));
    writeFileSync(join(dir, `d${i}`, `new${i}.txt`), 'n');
    await got;
    delays.push(performance.now() - t);
  }
  stop();
  delays.sort((a, b) => a - b);
  console.log(
    `watch of ${files} files in ${folders} folders: ready in ${readyMs.toFixed(0)} ms, heap kept ${heapMb.toFixed(1)} MiB (${((heapMb * 2 ** 20) / files).toFixed(0)} B per file); write → report median ${delays[10].toFixed(0)} ms (50 ms debounce)`,
  );
} finally {
  clearInterval(alive);
  cleanup();
}
