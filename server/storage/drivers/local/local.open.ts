/**
 * Opening a file for a download with its containment checked on the opened
 * file itself: Linux names an open descriptor's real path in /proc/self/fd,
 * so open → that name → fstat replaces realpath → stat → open (one threadpool
 * round trip fewer per download, ~a sixth of a 4 KiB GET's cost, and no
 * window between the check and the read). Elsewhere, or when anything is
 * off, the caller takes the resolve-then-stat path, which gives every case
 * its usual error.
 */
import { close, constants, fstat, open, readlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { LocalRoot } from './local.root';

/** Read-only, never blocking on a FIFO, never becoming the controlling terminal. */
const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
/** False once /proc/self/fd turned out to be missing (not Linux): the fast path is skipped from then on. */
let procFd = process.platform === 'linux';

/**
 * `clean` (a clean relative path, not the root) opened under `root`, with
 * its real path and its stats, when it is a regular file inside the root.
 * Null otherwise (missing, a folder, a special file, outside through a
 * symlink, or no /proc): nothing is left open. The caller closes `fd`.
 */
export async function openContained(root: LocalRoot, clean: string): Promise<{ fd: number; real: string; st: Stats } | null> {
  if (!procFd) return null;
  const fd = await new Promise<number | null>((resolve) => open(join(root.real, clean), FLAGS, (err, n) => resolve(err ? null : n)));
  if (fd === null) return null;
  let real: string | null = null;
  try {
    // Names the open file from the kernel's memory: never waits on a disk.
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    procFd = false;
  }
  const st = real !== null && root.contains(real) ? await new Promise<Stats | null>((resolve) => fstat(fd, (err, s) => resolve(err ? null : s))) : null;
  if (real !== null && st?.isFile()) return { fd, real, st };
  close(fd, () => undefined);
  return null;
}
