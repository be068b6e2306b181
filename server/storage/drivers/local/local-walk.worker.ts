/**
 * Worker side of the local driver's flat walk. A sync walker (readdirSync +
 * statSync, ~2 µs a call against ~30 µs for async) runs here so the event
 * loop stays free; entries go back in batches, at most a few in flight beyond
 * the one being consumed, so memory stays flat for a million files.
 *
 * workerData: { rootReal, start }. Messages out: { batch } | { done } | { error }.
 * Messages in: 'more' after each batch.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { closeSync, existsSync, lstatSync, openSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { sep } from 'node:path';
import { isInternalName, MAX_PATH_CHARS } from '../../../lib/paths';
import { lowerThisThread } from '../../../lib/proc-cpu';
import type { WalkEntry } from '../../types';

const BATCH = 1000;
const AHEAD = 4;
const { rootReal, start } = workerData as { rootReal: string; start: string };
// A walk is background work (sync): this thread yields the cores to requests.
lowerThisThread();
const inside = (real: string) => real === rootReal || real.startsWith(rootReal + sep);
/** One options object for every stat (a million entries). */
const STAT = { throwIfNoEntry: false } as const;

/**
 * A batch as it crosses to the main thread: columns, not an object per entry (the structured clone of 1,000
 * entry objects cost ~1 µs an entry on each side; the typed arrays are moved, not copied).
 */
export interface WalkBatch {
  paths: string[];
  /** 1 for a folder, 0 for a file. */
  dirs: Uint8Array<ArrayBuffer>;
  sizes: Float64Array<ArrayBuffer>;
  mtimes: Float64Array<ArrayBuffer>;
}

function columns(entries: WalkEntry[]): WalkBatch {
  const n = entries.length;
  const b: WalkBatch = { paths: new Array<string>(n), dirs: new Uint8Array(n), sizes: new Float64Array(n), mtimes: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    b.paths[i] = e.path;
    b.dirs[i] = e.type === 'dir' ? 1 : 0;
    b.sizes[i] = e.size;
    b.mtimes[i] = e.mtime;
  }
  return b;
}

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
 * What the symlink `p` leads to, or undefined when it leads outside the root, nowhere, or to a folder a link
 * already led into (`entered`: real paths; a link cycle is walked once).
 */
function linked(p: string, entered: Set<string>): Stats | undefined {
  let real: string;
  try {
    real = realpathSync(p);
  } catch {
    return undefined;
  }
  if (!inside(real)) return undefined;
  const st = statSync(p, STAT);
  if (st?.isDirectory()) {
    if (entered.has(real)) return undefined;
    entered.add(real);
  }
  return st;
}

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
    // Names only, and one lstat a name (what `find` does): the dirents' types were wanted only to spot a symlink,
    // which the lstat tells too, and a plain stat costs more (~6 µs against ~5 µs here; the walk bounds a re-sync).
    let names;
    try {
      names = readdirSync(abs);
    } catch (e) {
      release(via);
      if (!existsSync(rootReal)) throw Object.assign(new Error('the storage folder is missing'), { code: 'ROOT_GONE' });
      // A sub-folder removed or made unreadable during the walk is left out.
      if (rel === '') throw e;
      continue;
    }
    // Held (refs) by this loop and by each sub-folder it pushes.
    const own = Buffer.byteLength(abs) + 1 + NAME_MAX >= PATH_MAX ? hold(abs) : undefined;
    // Names are joined by hand: `abs` is absolute and normalised already, and `path.join` normalised each child again.
    const base = own ? `/proc/self/fd/${own.fd}/` : abs.endsWith(sep) ? abs : abs + sep;
    const through = own ?? via;
    for (const name of names) {
      if (isInternalName(name)) continue;
      const p = base + name;
      const path = rel === '' ? name : `${rel}/${name}`;
      if (path.length > MAX_PATH_CHARS) continue;
      let st = lstatSync(p, STAT);
      if (st?.isSymbolicLink()) st = linked(p, enteredLinks);
      if (!st) continue;
      if (st.isDirectory()) {
        yield { path, name, type: 'dir', size: 0, mtime: Math.floor(st.mtimeMs) };
        if (through) through.refs++;
        stack.push({ abs: p, rel: path, via: through });
      } else if (st.isFile()) {
        yield { path, name, type: 'file', size: st.size, mtime: Math.floor(st.mtimeMs) };
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
        const batch = columns(entries);
        port.postMessage({ batch }, [batch.dirs.buffer, batch.sizes.buffer, batch.mtimes.buffer]);
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
