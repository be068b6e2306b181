/**
 * Main-thread side of the flat walk: starts the walker worker and hands out
 * its batches as an async iterable with flow control (the worker waits for
 * 'more' before producing the next batch).
 */
import { relative } from 'node:path';
import { startWorker } from '../../../lib/worker';
import { AppError } from '../../../errors';
import type { WalkEntry } from '../../types';
import { fsError } from './local.errors';
import type { WalkBatch } from './local-walk.worker';

type Msg = { batch: WalkBatch } | { done: true } | { error: { code: string; message: string } };

/** A batch's entries, as the walk's callers take them. */
const entriesOf = (b: WalkBatch): WalkEntry[] =>
  b.paths.map((path, i) => ({
    path,
    name: path.slice(path.lastIndexOf('/') + 1),
    type: b.dirs[i] ? ('dir' as const) : ('file' as const),
    size: b.sizes[i],
    mtime: b.mtimes[i],
  }));

/**
 * Every file and folder below `start` (paths relative to it), skipping internal names and symlinks that lead
 * outside `rootReal`, in the worker's batches (up to 1,000 entries; a folder's entries follow each other).
 */
export async function* walkLocal(rootReal: string, start: string, signal?: AbortSignal): AsyncGenerator<WalkEntry[]> {
  const worker = startWorker(new URL('./local-walk.worker.ts', import.meta.url), { workerData: { rootReal, start } });
  const queue: Msg[] = [];
  let wake: (() => void) | null = null;
  let failure: unknown = null;
  const push = (m: Msg) => {
    queue.push(m);
    wake?.();
  };
  worker.on('message', push);
  worker.on('error', (e) => {
    failure = e;
    wake?.();
  });
  worker.on('exit', (code) => {
    if (code !== 0 && !failure) failure = new Error(`walk worker exited with code ${code}`);
    wake?.();
  });
  const onAbort = () => {
    failure = new AppError('cancelled');
    wake?.();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const where = relative(rootReal, start);
  try {
    for (;;) {
      signal?.throwIfAborted();
      while (queue.length === 0 && !failure) await new Promise<void>((r) => (wake = r));
      wake = null;
      if (failure) throw failure;
      const m = queue.shift()!;
      if ('done' in m) return;
      if ('error' in m) {
        if (m.error.code === 'ROOT_GONE') throw new AppError('storage_unavailable', { reason: m.error.message });
        throw fsError(Object.assign(new Error(m.error.message), { code: m.error.code }), where);
      }
      // Ask for the next batch before handing this one out, so the worker overlaps with the consumer.
      worker.postMessage('more');
      yield entriesOf(m.batch);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await worker.terminate();
  }
}
