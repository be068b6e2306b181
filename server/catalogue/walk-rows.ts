/**
 * The catalogue rows a full sync diffs its batches against. A walk yields each folder's entries together
 * (the local walker reads a folder whole, the breadth-first fallback lists one folder at a time), so a
 * folder's rows are read once, with the first batch that has one of its entries, and dropped with the first
 * batch that has none. Read per batch, the rows of issue 38's 100,000-entry folder were read again for each of
 * its 100 batches: 10 M rows, most of a no-change re-sync's main-thread time.
 */
import type { WalkEntry } from '../storage';
import { parentRel } from '../lib/paths';
import type { Existing } from './sync.repo';

/** Rows by path, as a batch's diff looks them up. */
export type RowsByPath = Pick<ReadonlyMap<string, Existing>, 'get' | 'has'>;

/** An empty catalogue's rows (a first sync reads none). */
export const NO_ROWS: RowsByPath = new Map();

/** Whether `dir` is the folder `path` sits in, without cutting a string (a sync asks it for every entry). */
const sitsIn = (path: string, dir: string) => {
  const cut = path.lastIndexOf('/');
  return (cut < 0 ? 0 : cut) === dir.length && path.startsWith(dir);
};

/** The folders `batch`'s entries sit in. A walk yields a folder's entries together, so most entries sit where the one before did. */
export function foldersOf(batch: readonly WalkEntry[]): string[] {
  const dirs = new Set<string>();
  let dir: string | undefined;
  for (const e of batch) if (dir === undefined || !sitsIn(e.path, dir)) dirs.add((dir = parentRel(e.path)));
  return [...dirs];
}

export class WalkRows {
  /** Folder → its rows by path: the folders of the last batch. */
  private held = new Map<string, Map<string, Existing>>();

  /** `read`: the rows of some folders (SyncNodesRepo.dirRows), in one read. */
  constructor(private read: (dirs: string[]) => Promise<Existing[]>) {}

  /**
   * The rows of `batch`'s folders, reading only the folders the previous batch did not have. Rows the sync
   * itself writes are not added: a walk yields each path once, so no later batch asks for them.
   */
  async of(batch: readonly WalkEntry[]): Promise<RowsByPath> {
    const dirs = new Set(foldersOf(batch));
    for (const d of this.held.keys()) if (!dirs.has(d)) this.held.delete(d);
    const missing = [...dirs].filter((d) => !this.held.has(d));
    for (const d of missing) this.held.set(d, new Map());
    if (missing.length) for (const r of await this.read(missing)) this.held.get(parentRel(r.path))!.set(r.path, r);
    // The folder of the last look-up and its rows: the batch's next entry most likely sits there too.
    let dir: string | undefined;
    let rows: Map<string, Existing> | undefined;
    const rowOf = (path: string) => {
      if (dir === undefined || !sitsIn(path, dir)) rows = this.held.get((dir = parentRel(path)));
      return rows?.get(path);
    };
    return { get: rowOf, has: (path) => rowOf(path) !== undefined };
  }
}
