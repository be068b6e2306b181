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
import { closeSync, existsSync, openSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { isInternalName, MAX_PATH_CHARS } from '../../../lib/paths';
import { lowerThisThread } from '../../../lib/proc-cpu';
import type { WalkEntry } from '../../types';

const BATCH = 1000;
const AHEAD = 4;
const { rootReal, start } = workerData as { rootReal: string; start: string };
// A walk is background work (sync): this thread yields the cores to requests.
lowerThisThread();
const inside = (real: string) => real === rootReal || real.startsWith(rootReal + sep);

/** Linux's PATH_MAX (bytes, with the final NUL): a longer path fails with ENAMETOOLONG. */
const PATH_MAX = 4096;
/** The longest name a Linux file system takes (bytes). */
const NAME_MAX = 255;

/** An open descriptor of a deep folder, closed once the folder and its sub-folders waiting on the stack are done. */
interface Handle {
  fd: number;
  refs: number;
}
interface Folder {
  /** How to reach it: its absolute path, or below PATH_MAX `/proc/self/fd/<an ancestor's descriptor>/…`. */
  abs: string;
  rel: string;
  /** The descriptor `abs` goes through (held until this folder is read). */
  via?: Handle;
}
/** Descriptors open now: closed when the walk fails midway (a walk cancelled ends the thread, not the process, so it can leave one per deep level). */
const open = new Set<number>();
const hold = (abs: string): Handle => {
  const fd = openSync(abs, 'r');
  open.add(fd);
  return { fd, refs: 1 };
};
const release = (h: Handle | undefined) => {
  if (h && --h.refs === 0) {
    open.delete(h.fd);
    closeSync(h.fd);
  }
};

/**
 * Depth-first walk with an explicit stack; yields folders before their content. A folder whose children's
 * paths could pass PATH_MAX (a chain of long names) is opened, and its children reached through
 * /proc/self/fd (the kernel resolves the descriptor, so the path stays short); at most one descriptor per
 * level of depth is open. Entries whose relative path is longer than a request may name are left out.
 */
function* walk(): Generator<WalkEntry> {
  const stack: Folder[] = [{ abs: start, rel: '' }];
  // Real paths of symlinked folders already entered: a link cycle is walked once.
  const enteredLinks = new Set<string>();
  while (stack.length) {
    const { abs, rel, via } = stack.pop()!;
    let dirents;
    try {
      dirents = readdirSync(abs, { withFileTypes: true });
    } catch (e) {
      release(via);
      if (!existsSync(rootReal)) throw Object.assign(new Error('the storage folder is missing'), { code: 'ROOT_GONE' });
      // A sub-folder removed or made unreadable during the walk is left out.
      if (rel === '') throw e;
      continue;
    }
    // Held (refs) by this loop and by each sub-folder it pushes.
    const own = Buffer.byteLength(abs) + 1 + NAME_MAX >= PATH_MAX ? hold(abs) : undefined;
    const base = own ? `/proc/self/fd/${own.fd}` : abs;
    const through = own ?? via;
    for (const d of dirents) {
      if (isInternalName(d.name)) continue;
      const p = join(base, d.name);
      const path = rel === '' ? d.name : `${rel}/${d.name}`;
      if (path.length > MAX_PATH_CHARS) continue;
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
        if (through) through.refs++;
        stack.push({ abs: p, rel: path, via: through });
      } else if (st.isFile()) {
        yield { path, name: d.name, type: 'file', size: st.size, mtime: Math.floor(st.mtimeMs) };
      }
    }
    release(own);
    release(via);
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
    for (const fd of open) closeSync(fd);
    const err = e as NodeJS.ErrnoException;
    port.postMessage({ error: { code: err.code ?? '', message: err.message } });
  }
}

void main();
