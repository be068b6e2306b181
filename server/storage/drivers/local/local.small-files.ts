/**
 * Small local files kept in memory between downloads (issue 38: a 4 KiB GET cost four thread-pool round
 * trips, open, fstat, read and close, and their wake-ups were most of its price). A file served from here
 * costs one: a `stat` of its path, whose device, inode, size, change and modification times must equal
 * those the bytes were read with. A write in place changes the change time, a replacement the inode, so
 * changed bytes are never served; the times are only trusted for a file unchanged for RACY_MS before it
 * was read (a write in the same clock tick as the read would leave them equal, git's "racily clean" case).
 * The stat follows the path as it is now: a symlink swapped in on the way names another inode unless it
 * leads to the very file that was checked inside the root when it was read. Bounded by BUDGET_BYTES (least
 * recently served first out).
 *
 * On a local disk's filesystem that stat is synchronous: the file was just read, so its inode and path are
 * in the kernel's caches and the call takes microseconds, against ~20 µs of main-thread time for a round trip
 * through the thread pool (the largest cost left of a kept file's send). On a network or FUSE filesystem a
 * stat may wait for a server, so it stays asynchronous there.
 */
import { read, stat, statfs, statSync, type Stats } from 'node:fs';

/** The largest file kept. */
export const SMALL_MAX_BYTES = 64 * 1024;
/** All kept bytes together. */
const BUDGET_BYTES = 32 << 20;
/** A file changed less than this before it was read is not kept (its times may not show a change in the same tick). */
export const RACY_MS = 2000;
/** `statfs` types of filesystems on a local disk or in memory: ext2/3/4, xfs, btrfs, tmpfs, overlayfs, f2fs, zfs, bcachefs. */
const LOCAL_FS: ReadonlySet<number> = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0xf2f52010, 0x2fc12fc1, 0xca451a4e]);

/** The current stats of `abs`, or null (missing, or any error: the caller then opens the file the usual way). */
function statNow(abs: string, sync: boolean): Promise<Stats | null> | Stats | null {
  if (!sync) return new Promise((resolve) => stat(abs, (err, s) => resolve(err ? null : s)));
  try {
    return statSync(abs, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

interface Kept {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** The contained real path it was opened as. */
  real: string;
  bytes: Buffer;
  /** When it was last served (a counter): the least recent go first once the budget is passed. */
  used: number;
}

const same = (k: Kept, st: Stats) => st.ino === k.ino && st.dev === k.dev && st.size === k.size && st.mtimeMs === k.mtimeMs && st.ctimeMs === k.ctimeMs;

class SmallFiles {
  private kept = new Map<string, Kept>();
  private bytes = 0;
  private tick = 0;
  /** Per device (`st.dev`): whether its filesystem is on a local disk (asked once with `statfs`). */
  private localDevs = new Map<number, boolean>();

  /** The kept bytes of `abs` with its current stats, when it is unchanged since they were read; else null (and forgotten). */
  async hit(abs: string): Promise<{ bytes: Buffer; real: string; st: Stats } | null> {
    const k = this.kept.get(abs);
    if (!k) return null;
    const st = await statNow(abs, this.localDevs.get(k.dev) === true);
    if (!st || !same(k, st)) {
      this.forget(abs);
      return null;
    }
    // Stamped, not moved to the Map's end: a delete and a set per download churned the Map's table.
    k.used = ++this.tick;
    return { bytes: k.bytes, real: k.real, st };
  }

  /**
   * Reads a small, settled file opened as `fd` (contained: `real`, `st` from its fstat) whole and keeps it;
   * closes nothing. Null when it does not qualify or the read came short (the caller sends from `fd` as before).
   */
  async fill(abs: string, fd: number, real: string, st: Stats): Promise<Buffer | null> {
    if (st.size > SMALL_MAX_BYTES || Date.now() - Math.max(st.mtimeMs, st.ctimeMs) < RACY_MS) return null;
    // Not from the shared slab: a kept 2 KiB buffer must not pin 8 KiB of it.
    const bytes = Buffer.allocUnsafeSlow(st.size);
    const got = await new Promise<number>((resolve) => read(fd, bytes, 0, st.size, 0, (err, n) => resolve(err ? -1 : n)));
    if (got !== st.size) return null;
    if (!this.localDevs.has(st.dev)) {
      const type = await new Promise<number | null>((resolve) => statfs(abs, (err, s) => resolve(err ? null : s.type)));
      this.localDevs.set(st.dev, type !== null && LOCAL_FS.has(type));
    }
    this.forget(abs);
    this.kept.set(abs, { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, real, bytes, used: ++this.tick });
    this.bytes += st.size;
    if (this.bytes > BUDGET_BYTES) this.evict();
    return bytes;
  }

  /** The bytes kept now (the status and the tests). */
  get keptBytes(): number {
    return this.bytes;
  }

  /** Drops the least recently served until a quarter of the budget is free (a sort now and then, not per download). */
  private evict(): void {
    const byUse = [...this.kept].sort((a, b) => a[1].used - b[1].used);
    for (const [abs] of byUse) {
      if (this.bytes <= (BUDGET_BYTES * 3) / 4) break;
      this.forget(abs);
    }
  }

  private forget(abs: string): void {
    const k = this.kept.get(abs);
    if (!k) return;
    this.kept.delete(abs);
    this.bytes -= k.size;
  }
}

/** One budget for every local storage. */
export const smallFiles = new SmallFiles();
