/**
 * Worker side of the local driver's flat walk. A sync walker (readdirSync +
 * statSync, ~2 µs a call against ~30 µs for async) runs here so the event
 * loop stays free; entries go back in batches, at most a few in flight beyond
 * the one being consumed, so memory stays flat for a million files.
 *
 * workerData: { rootReal, start }. Messages out: { entries } | { done } | { error }.
 * Messages in: 'more' after each batch.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { isInternalName } from '../../../lib/paths';
import { lowerThisThread } from '../../../lib/proc-cpu';
import type { WalkEntry } from '../../types';

const BATCH = 1000;
const AHEAD = 4;
const { rootReal, start } = workerData as { rootReal: string; start: string };
// A walk is background work (sync): this thread yields the cores to requests.
lowerThisThread();
const inside = (real: string) => real === rootReal || real.startsWith(rootReal + sep);

/** Depth-first walk with an explicit stack; yields folders before their content. */
function* walk(): Generator<WalkEntry> {
  const stack: Array<{ abs: string; rel: string }> = [{ abs: start, rel: '' }];
  // Real paths of symlinked folders already entered: a link cycle is walked once.
  const enteredLinks = new Set<string>();
  while (stack.length) {
    const { abs, rel } = stack.pop()!;
    let dirents;
    try {
      dirents = readdirSync(abs, { withFileTypes: true });
    } catch (e) {
      if (!existsSync(rootReal)) throw Object.assign(new Error('the storage folder is missing'), { code: 'ROOT_GONE' });
      // A sub-folder removed or made unreadable during the walk is left out.
      if (rel === '') throw e;
      continue;
    }
    for (const d of dirents) {
      if (isInternalName(d.name)) continue;
      const p = join(abs, d.name);
      const path = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isSymbolicLink()) {
        let real: string;
        try {
          real = realpathSync(p);
        } catch {
          continue;
        }
        if (!inside(real)) continue;
        const st = statSync(p, { throwIfNoEntry: false });
        if (st?.isDirectory()) {
          if (enteredLinks.has(real)) continue;
          enteredLinks.add(real);
        }
      }
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) {
        yield { path, name: d.name, type: 'dir', size: 0, mtime: Math.floor(st.mtimeMs) };
        stack.push({ abs: p, rel: path });
      } else if (st.isFile()) {
        yield { path, name: d.name, type: 'file', size: st.size, mtime: Math.floor(st.mtimeMs) };
      }
    }
  }
}

async function main(): Promise<void> {
  const port = parentPort!;
  const it = walk();
  // Up to AHEAD batches in flight, so the walk overlaps the consumer's database work; each 'more' frees one.
  let credits = AHEAD;
  let wake: (() => void) | null = null;
  port.on('message', () => {
    credits++;
    wake?.();
  });
  try {
    for (;;) {
      const entries: WalkEntry[] = [];
      let r = it.next();
      while (!r.done) {
        entries.push(r.value);
        if (entries.length >= BATCH) break;
        r = it.next();
      }
      if (entries.length) {
        port.postMessage({ entries });
        credits--;
        while (credits <= 0) await new Promise<void>((res) => (wake = res));
        wake = null;
      }
      if (r.done) break;
    }
    port.postMessage({ done: true });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    port.postMessage({ error: { code: err.code ?? '', message: err.message } });
  }
}

void main();
