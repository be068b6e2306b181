/**
 * File watching for `sync_mode: fsnotify`: one inotify watch per folder of the tree (Node's `fs.watch` on
 * each folder reports what happens to its files), changes debounced and reported as relative paths. A
 * folder that appears (made or moved in) is watched and its contents reported, since they may have been
 * written before its watch existed; a folder that goes drops its watches. A tree too big to watch is
 * refused with `unsupported` so the sync engine falls back to polling.
 *
 * Not chokidar: chokidar 4 keeps a watcher and a `Stats` per file (about 5 KB of heap per file, measured
 * with heap snapshots in the replication bench: 5 GB for a million-file share), where the folder's watch
 * already tells of every file in it.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../../errors';
import { isInternalPath } from '../../../lib/paths';
import type { WatchListener } from '../../types';

export interface WatchOptions {
  /** More folders than this → `unsupported` (one inotify watch per folder). */
  maxFolders?: number;
  debounceMs?: number;
}

/** Starts watching `rootReal`; resolves, once every folder is watched, with a stop function. */
export async function watchLocal(rootReal: string, listener: WatchListener, opts: WatchOptions = {}): Promise<() => void> {
  const maxFolders = opts.maxFolders ?? 50_000;
  const debounceMs = opts.debounceMs ?? 300;
  const abs = (rel: string) => (rel ? join(rootReal, rel) : rootReal);
  const watchers = new Map<string, FSWatcher>();
  let stopped = false;
  let tooBig = false;
  let limit: string | null = null;

  const pending = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let firstAt = 0;
  const flush = () => {
    timer = null;
    const paths = [...pending];
    pending.clear();
    if (paths.length && !stopped) listener(paths);
  };
  const report = (rel: string) => {
    if (pending.size === 0) firstAt = Date.now();
    pending.add(rel);
    if (timer) clearTimeout(timer);
    // Debounced, but a steady stream of changes is still reported every few debounce periods.
    timer = setTimeout(flush, Date.now() - firstAt > debounceMs * 5 ? 0 : debounceMs);
  };

  /** Drops the watches of `rel` and every folder below it (it was removed or moved away). */
  const forget = (rel: string) => {
    for (const [k, w] of watchers) {
      if (k === rel || k.startsWith(`${rel}/`)) {
        w.close();
        watchers.delete(k);
      }
    }
  };

  const onEvent = (dir: string, name: string | null) => {
    if (stopped || !name) return;
    const child = dir ? `${dir}/${name}` : name;
    if (isInternalPath(child)) return;
    report(child);
    lstat(abs(child))
      .then(
        (st) => (st.isDirectory() && !watchers.has(child) ? scan(child, true) : undefined),
        () => forget(child),
      )
      .catch(() => undefined);
  };

  /** Watches one folder; false when it is gone already or no more watches may be taken. */
  const watchFolder = (rel: string): boolean => {
    if (watchers.has(rel)) return true;
    if (watchers.size >= maxFolders) {
      tooBig = true;
      return false;
    }
    try {
      const w = watch(abs(rel), { persistent: false }, (_event, name) => onEvent(rel, name));
      // The folder itself went away (or its watch broke): the parent's watch reports the removal.
      w.on('error', () => forget(rel));
      watchers.set(rel, w);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EMFILE') limit = code;
      return false;
    }
  };

  /** Watches `top` and every folder below it; `announce` reports every entry found on the way. */
  const scan = async (top: string, announce: boolean): Promise<void> => {
    const stack = [top];
    while (stack.length && !stopped && !tooBig && !limit) {
      const dir = stack.pop()!;
      if (!watchFolder(dir)) continue;
      const entries = await readdir(abs(dir), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const child = dir ? `${dir}/${e.name}` : e.name;
        if (isInternalPath(child)) continue;
        if (announce) report(child);
        // A symlink to a folder is an entry, not a folder to descend into.
        if (e.isDirectory()) stack.push(child);
      }
    }
  };

  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    for (const w of watchers.values()) w.close();
    watchers.clear();
  };
  await scan('', false);
  if (limit) {
    stop();
    throw new AppError('unsupported', { reason: `too many folders to watch (${limit}: inotify limit reached)` });
  }
  if (tooBig) {
    stop();
    throw new AppError('unsupported', { reason: `more than ${maxFolders} folders to watch` });
  }
  return stop;
}
