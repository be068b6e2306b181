/**
 * File watching for `sync_mode: fsnotify`: chokidar over the whole tree,
 * changes debounced and reported as relative paths. A tree too big to watch
 * is refused with `unsupported` so the sync engine falls back to polling.
 */
import { watch } from 'chokidar';
import { relative, sep } from 'node:path';
import { AppError } from '../../../errors';
import { isInternalPath } from '../../../lib/paths';
import type { WatchListener } from '../../types';

export interface WatchOptions {
  /** More folders than this → `unsupported` (one inotify watch per folder). */
  maxFolders?: number;
  debounceMs?: number;
}

/** Starts watching `rootReal`; resolves once the initial scan is done with a stop function. */
export async function watchLocal(rootReal: string, listener: WatchListener, opts: WatchOptions = {}): Promise<() => void> {
  const maxFolders = opts.maxFolders ?? 50_000;
  const debounceMs = opts.debounceMs ?? 300;
  const relOf = (abs: string) => relative(rootReal, abs).split(sep).join('/');
  let folders = 0;
  let tooBig = false;
  const watcher = watch(rootReal, {
    ignoreInitial: true,
    followSymlinks: false,
    ignored: (abs, stats) => {
      const rel = relOf(abs);
      if (rel !== '' && isInternalPath(rel)) return true;
      if (stats?.isDirectory() && ++folders > maxFolders) tooBig = true;
      return tooBig;
    },
  });
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    const paths = [...pending];
    pending.clear();
    if (paths.length) listener(paths);
  };
  let firstAt = 0;
  watcher.on('all', (_event, abs) => {
    if (pending.size === 0) firstAt = Date.now();
    pending.add(relOf(abs));
    if (timer) clearTimeout(timer);
    // Debounced, but a steady stream of changes is still reported every few debounce periods.
    timer = setTimeout(flush, Date.now() - firstAt > debounceMs * 5 ? 0 : debounceMs);
  });
  const stop = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    void watcher.close();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      watcher.once('ready', resolve);
      watcher.on('error', (e) => reject(e));
    });
  } catch (e) {
    stop();
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EMFILE')
      throw new AppError('unsupported', { reason: `too many folders to watch (${code}: inotify limit reached)` });
    throw e;
  }
  if (tooBig) {
    stop();
    throw new AppError('unsupported', { reason: `more than ${maxFolders} folders to watch` });
  }
  return stop;
}
