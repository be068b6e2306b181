/**
 * Starts a worker thread from a `*.worker.ts` source that works both from
 * source (tsx, tests) and from the bundle (scripts/build.mjs emits each worker
 * to dist/server/workers/<name>.js). Pass `new URL('./x.worker.ts', import.meta.url)`.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { basename, dirname, join } from 'node:path';

export function startWorker(source: URL, options: WorkerOptions = {}): Worker {
  const srcPath = fileURLToPath(source);
  // From source: --import tsx does not reach worker threads on Node 20, so register tsx inside the worker first.
  if (existsSync(srcPath))
    return new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(source.href)}); })`, { ...options, eval: true });
  // In the bundle this module's URL is dist/server/cli.js; workers sit beside it.
  const bundled = join(dirname(fileURLToPath(import.meta.url)), 'workers', basename(srcPath, '.ts') + '.js');
  return new Worker(bundled, options);
}
