/**
 * Starts a worker thread from a `*.worker.ts` source that works from source
 * (tsx), from the tests' compiled tree (scripts/test-compile.mjs) and from the
 * bundle (scripts/build.mjs emits each worker to dist/server/workers/<name>.js).
 * Pass `new URL('./x.worker.ts', import.meta.url)`.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { basename, dirname, join, relative } from 'node:path';

export function startWorker(source: URL, options: WorkerOptions = {}): Worker {
  const srcPath = fileURLToPath(source);
  const twin = compiledTwin(srcPath, import.meta.url, import.meta.filename);
  if (twin) return new Worker(twin, options);
  // From source: --import tsx does not reach worker threads on Node 20, so register tsx inside the worker first.
  if (existsSync(srcPath))
    return new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(source.href)}); })`, { ...options, eval: true });
  // In the bundle this module's URL is dist/server/cli.js; workers sit beside it.
  const bundled = join(dirname(fileURLToPath(import.meta.url)), 'workers', basename(srcPath, '.ts') + '.js');
  return new Worker(bundled, options);
}

/**
 * The JavaScript of the source file `srcPath` when the module with this `import.meta.url` and
 * `import.meta.filename` runs from the tests' compiled tree (scripts/test-compile.mjs rewrites the URL to the
 * source's; the filename stays the running file's): at the same place relative to it. Undefined when that module
 * runs from its source or a bundle.
 */
export function compiledTwin(srcPath: string, url: string, filename: string): string | undefined {
  const source = fileURLToPath(url);
  if (filename === source) return undefined;
  return join(dirname(filename), relative(dirname(source), srcPath)).replace(/\.tsx?$/, '.js');
}
