/**
 * The `local` driver: a folder on this machine (or an NFS/SMB mount served
 * through it). Containment lives in LocalRoot; this file maps the contract's
 * verbs to filesystem calls.
 */
import { close, constants, promises as fsp, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../../errors';
import { discard } from '../../../lib/streams';
import { randomToken } from '../../../lib/crypto';
import { STAGING_DIR, TEMP_PREFIX, cleanRel } from '../../../lib/paths';
import type { ByteRange, Entry, StorageDriver, WalkEntry, WalkIterable, WatchListener, WriteOptions } from '../../types';
import { fsError, mapFs } from './local.errors';
import { LocalRoot } from './local.root';
import { openContained } from './local.open';
import { smallFiles } from './local.small-files';
import { fileSink } from './local.sink';
import { LocalMultipart } from './local.multipart';
import { walkLocal } from './local.walk';
import { watchLocal } from './local.watch';
import type { TempJournal } from './local.temps';

/** Read chunk size: the throughput lever on this machine (64 KiB default ≈ 0.85 GB/s, 1 MiB ≈ 2.3 GB/s). */
const READ_CHUNK = 1024 * 1024;
/** The smallest read buffer (a file that grows while it is read still streams, in chunks this size or more). */
const MIN_READ_CHUNK = 64 * 1024;
/**
 * A read's buffer size: READ_CHUNK, or less for a smaller file or range. Every read allocates its full
 * buffer, so a 4 KiB file read with 1 MiB buffers churned 2 MiB of memory that only a full GC gives back
 * (a backlog of small replication copies spent most of its time in GC).
 */
const readChunk = (size: number, range?: ByteRange) => Math.max(MIN_READ_CHUNK, Math.min(READ_CHUNK, (range?.end ?? size - 1) - (range?.start ?? 0) + 1));
/** How many entries of one folder are stat'ed concurrently while listing. */
const LIST_STAT_BATCH = 64;

export class LocalDriver implements StorageDriver {
  readonly multipart: LocalMultipart;
  private readonly stops = new Set<() => void>();

  /**
   * `stagingBase`: the data-dir folder for multipart sessions (see LocalMultipart).
   * `temps`: where the folders that receive temp files are noted (see local.temps).
   */
  constructor(
    private readonly root: LocalRoot,
    stagingBase: string | null = null,
    private readonly temps: TempJournal | null = null,
  ) {
    this.multipart = new LocalMultipart(root, stagingBase);
  }

  /** Metadata of `rel`, following symlinks that stay inside. Missing (or not a file/folder) → `not_found`. */
  async stat(rel: string): Promise<Entry> {
    return (await this.statLocal(rel)).entry;
  }

  /**
   * `stat` plus the contained real path it looked at (one resolve for a download's stat and send);
   * with `open`, a file also comes opened for reading where local.open.ts can check it (`fd`, the caller
   * closes it), or, when small and settled, as its `bytes` (local.small-files.ts; no descriptor then).
   */
  async statLocal(rel: string, o: { open?: boolean } = {}): Promise<{ entry: Entry; path: string; fd?: number; bytes?: Buffer }> {
    const clean = o.open ? cleanRel(rel, { allowReserved: true }) : '';
    if (clean !== '') {
      const abs = join(this.root.real, clean);
      const kept = await smallFiles.hit(abs);
      if (kept) return { entry: entryOf(baseOf(clean), kept.st)!, path: kept.real, bytes: kept.bytes };
      const opened = await openContained(this.root, clean);
      if (opened) {
        const entry = entryOf(baseOf(clean), opened.st)!;
        const bytes = await smallFiles.fill(abs, opened.fd, opened.real, opened.st);
        if (!bytes) return { entry, path: opened.real, fd: opened.fd };
        close(opened.fd, () => undefined);
        return { entry, path: opened.real, bytes };
      }
    }
    const abs = await this.root.resolve(rel);
    const st = await mapFs(rel, () => fsp.stat(abs));
    const entry = entryOf(rel === '' ? '' : baseOf(rel), st);
    if (!entry) throw new AppError('not_found', { path: rel });
    return { entry, path: abs };
  }

  /**
   * Children of a folder. Hides the driver's own temp files and staging
   * folder, special files, and symlinks whose target lies outside the root.
   */
  async *list(dir: string): AsyncIterable<Entry> {
    const abs = await this.root.resolve(dir);
    const dirents = await mapFs(dir, () => fsp.readdir(abs, { withFileTypes: true }));
    const visible = dirents.filter((d) => !d.name.startsWith(TEMP_PREFIX) && !(d.name === STAGING_DIR && dir === ''));
    for (let i = 0; i < visible.length; i += LIST_STAT_BATCH) {
      const batch = await Promise.all(
        visible.slice(i, i + LIST_STAT_BATCH).map(async (d) => {
          const p = join(abs, d.name);
          if (d.isSymbolicLink()) {
            const real = await fsp.realpath(p).catch(() => null);
            if (real === null || !this.root.contains(real)) return null;
          }
          // A child that vanished between readdir and stat is simply not listed.
          const st = await fsp.stat(p).catch(() => null);
          return st && entryOf(d.name, st);
        }),
      );
      for (const e of batch) if (e) yield e;
    }
  }

  /** Streams the file (or the inclusive `range`) in 1 MiB chunks. Missing → `not_found`; a folder → `conflict`. */
  async read(rel: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    const abs = await this.root.resolve(rel);
    const fh = await mapFs(rel, () => fsp.open(abs, 'r'));
    let st: Stats;
    try {
      st = await fh.stat();
      if (st.isDirectory()) throw new AppError('conflict', { path: rel, reason: 'is a folder' });
      // Aborted while opening: refuse now. A stream destroyed before it is returned would emit its error
      // before the caller could listen (an unhandled 'error' ends the process).
      if (signal?.aborted) throw new AppError('cancelled');
    } catch (e) {
      await fh.close();
      throw fsError(e, rel);
    }
    const stream = fh.createReadStream({ start: range?.start, end: range?.end, highWaterMark: readChunk(st.size, range) });
    if (signal) {
      const onAbort = () => stream.destroy(new AppError('cancelled'));
      signal.addEventListener('abort', onAbort, { once: true });
      stream.once('close', () => signal.removeEventListener('abort', onAbort));
    }
    return stream;
  }

  /**
   * Atomic write: the body goes to a temp file in the target's folder, is
   * fsynced, then renamed over the target (or hard-linked when `overwrite` is
   * false, which fails instead of replacing), and the folder is fsynced.
   */
  async write(rel: string, body: Readable, opts: WriteOptions = {}): Promise<Entry> {
    const target = await this.root.resolve(rel);
    const dir = dirname(target);
    const parent = await fsp.stat(dir).catch((e) => {
      throw fsError(e, rel);
    });
    if (!parent.isDirectory()) throw new AppError('not_found', { path: rel });
    const tmp = this.tempIn(dir);
    try {
      // A staged file on this filesystem becomes the temp file by a rename: no copy of its bytes.
      const moved = opts.fromFile !== undefined && (await adopt(opts.fromFile, tmp));
      if (moved) discard(body);
      const fh = moved ? await fsp.open(tmp, 'r+') : await fsp.open(tmp, 'wx', 0o644);
      try {
        if (moved) await fh.chmod(0o644);
        else await pipeline(body, fileSink(fh), { signal: opts.signal });
        await fh.sync();
      } finally {
        await fh.close();
      }
      if (opts.overwrite === false) {
        await fsp.link(tmp, target);
        await fsp.unlink(tmp);
      } else {
        await fsp.rename(tmp, target);
      }
      await syncDir(dir);
    } catch (e) {
      await fsp.rm(tmp, { force: true }).catch(() => undefined);
      throw fsError(e, rel);
    }
    return this.stat(rel);
  }

  /** Creates the folder and its missing parents with mode 0755. Idempotent; a file in the way → `conflict`. */
  async mkdir(rel: string): Promise<void> {
    const abs = await this.root.resolve(rel);
    await mapFs(rel, () => fsp.mkdir(abs, { recursive: true, mode: 0o755 }));
    const st = await mapFs(rel, () => fsp.stat(abs));
    if (!st.isDirectory()) throw new AppError('conflict', { path: rel });
  }

  /** Deletes a file, a folder with its content, or a symlink itself (never its target). Missing → `not_found`. */
  async delete(rel: string): Promise<void> {
    if (cleanRel(rel, { allowReserved: true }) === '') throw new AppError('permission_denied', { path: '', reason: 'the storage root cannot be deleted' });
    const abs = await this.root.resolveEntry(rel);
    await mapFs(rel, () => fsp.lstat(abs));
    await mapFs(rel, () => fsp.rm(abs, { recursive: true }));
  }

  /**
   * Renames `from` to `to` (the entry itself, not a symlink's target). The
   * target's folder must exist (`not_found`); an existing target is `conflict`
   * unless `overwrite`, then it is replaced whole. Falls back to copy + delete
   * across mount points inside the root.
   */
  async move(from: string, to: string, opts: { overwrite: boolean }): Promise<void> {
    const src = await this.root.resolveEntry(from);
    const dst = await this.root.resolveEntry(to);
    const st = await mapFs(from, () => fsp.lstat(src));
    try {
      await this.publish(to, dst, opts.overwrite, src, st.isDirectory());
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw fsError(e, to);
      await this.copy(from, to, opts);
      await mapFs(from, () => fsp.rm(src, { recursive: true }));
    }
  }

  /** Copies a file or folder (reflinks where the filesystem can). Existing target → `conflict` unless `overwrite`. */
  async copy(from: string, to: string, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<void> {
    const src = await this.root.resolve(from);
    const dst = await this.root.resolveEntry(to);
    const st = await mapFs(from, () => fsp.stat(src));
    await this.checkTarget(to, dst, opts.overwrite);
    const staged = this.tempIn(dirname(dst));
    try {
      if (st.isDirectory()) await fsp.cp(src, staged, { recursive: true, errorOnExist: true, force: false, mode: constants.COPYFILE_FICLONE });
      else await fsp.copyFile(src, staged, constants.COPYFILE_FICLONE);
      opts.signal?.throwIfAborted();
      await this.publish(to, dst, opts.overwrite, staged, st.isDirectory());
    } catch (e) {
      await fsp.rm(staged, { recursive: true, force: true }).catch(() => undefined);
      throw fsError(e, to);
    }
  }

  /** Absolute path of `rel` after the containment check (lets HTTP use fast file paths). */
  localPath(rel: string): Promise<string> {
    return this.root.resolve(rel);
  }

  /** Flat walk below `prefix` from a worker thread, in its batches too (`pages`); paths are relative to `prefix`. */
  walk(prefix: string, signal?: AbortSignal): WalkIterable {
    const pages = async function* (this: LocalDriver): AsyncGenerator<WalkEntry[]> {
      const start = await this.root.resolve(prefix);
      const st = await mapFs(prefix, () => fsp.stat(start));
      if (!st.isDirectory()) throw new AppError('not_found', { path: prefix });
      yield* walkLocal(this.root.real, start, signal);
    }.bind(this);
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page;
      },
    };
  }

  /** Watches the whole tree (debounced); throws `unsupported` when it is too big to watch. */
  async watch(listener: WatchListener): Promise<() => void> {
    const stop = await watchLocal(this.root.real, listener);
    const once = () => {
      if (this.stops.delete(once)) stop();
    };
    this.stops.add(once);
    return once;
  }

  /** Stops every watcher. Idempotent. */
  async close(): Promise<void> {
    for (const stop of [...this.stops]) stop();
  }

  /** A fresh temp name in `dir`, the folder noted first so a crash's leftovers there are swept at the next start. */
  private tempIn(dir: string): string {
    this.temps?.note(dir);
    return join(dir, TEMP_PREFIX + randomToken(9));
  }

  /** Refuses a target whose folder is missing (`not_found`) or that exists without `overwrite` (`conflict`). */
  private async checkTarget(rel: string, dst: string, overwrite: boolean): Promise<void> {
    const parent = await fsp.stat(dirname(dst)).catch((e) => {
      throw fsError(e, rel);
    });
    if (!parent.isDirectory()) throw new AppError('not_found', { path: rel });
    if (
      !overwrite &&
      (await fsp.lstat(dst).then(
        () => true,
        () => false,
      ))
    )
      throw new AppError('conflict', { path: rel });
  }

  /**
   * Renames `staged` onto `dst`. A file replaces a file atomically; any other
   * existing target is first renamed aside and removed only once the new one
   * is in place (restored when publishing fails), so it is replaced whole.
   */
  private async publish(rel: string, dst: string, overwrite: boolean, staged: string, stagedIsDir: boolean): Promise<void> {
    await this.checkTarget(rel, dst, overwrite);
    const old = await fsp.lstat(dst).catch(() => null);
    const dir = dirname(dst);
    if (!old || (!old.isDirectory() && !stagedIsDir)) {
      await fsp.rename(staged, dst);
    } else {
      const aside = this.tempIn(dir);
      await fsp.rename(dst, aside);
      try {
        await fsp.rename(staged, dst);
      } catch (e) {
        await fsp.rename(aside, dst);
        throw e;
      }
      await fsp.rm(aside, { recursive: true, force: true });
    }
    await syncDir(dir);
  }
}

/** Renames the staged file `from` to `tmp`; false when it cannot (another filesystem): the body is streamed instead. */
async function adopt(from: string, tmp: string): Promise<boolean> {
  try {
    await fsp.rename(from, tmp);
    return true;
  } catch {
    return false;
  }
}

const baseOf = (rel: string): string => basename(cleanRel(rel, { allowReserved: true }));

/** Entry of a file or folder; null for sockets, FIFOs and devices, which the service never shows. */
function entryOf(name: string, st: Stats): Entry | null {
  if (st.isDirectory()) return { name, type: 'dir', size: 0, mtime: Math.floor(st.mtimeMs) };
  if (st.isFile()) return { name, type: 'file', size: st.size, mtime: Math.floor(st.mtimeMs) };
  return null;
}

/** fsyncs a folder so a rename inside it survives a power cut. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
