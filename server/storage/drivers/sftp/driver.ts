/**
 * The sftp storage driver: the StorageDriver contract over a pool of SFTP
 * sessions. Paths arrive clean and relative (lib/paths) and are joined under
 * the configured root; nothing outside the root is ever addressed.
 */
import { posix } from 'node:path';
import { addAbortSignal, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Attributes } from 'ssh2';
import { AppError } from '../../../errors';
import { randomToken } from '../../../lib/crypto';
import { baseName, parentRel, TEMP_PREFIX } from '../../../lib/paths';
import type { ByteRange, Entry, StorageDriver, WriteOptions } from '../../types';
import { openSession, type SftpSession } from './client';
import { MAX_NAME_BYTES, type SftpConfig } from './config';
import { fromSftp, isFailure, isNoSuchFile } from './errors';
import { SessionPool } from './pool';
import { ParallelReader, PipelinedWriter, type ReadLane } from './streams';

/** Knobs with defaults measured on loopback (see docs/drivers/sftp.md); tests shorten the idle time. */
export interface SftpTuning {
  poolSize: number;
  idleMs: number;
  readChunkBytes: number;
  readConcurrency: number;
  /** Sessions one big read may spread over (each is its own server process). */
  readLanes: number;
  /** Reads at least this long use more than one lane. */
  laneMinBytes: number;
  writeWindowBytes: number;
}

export const DEFAULT_TUNING: SftpTuning = {
  poolSize: 4,
  idleMs: 60_000,
  // Just under OpenSSH's 255 KiB read limit (so ssh2 never splits a request), and
  // 8 of them fill ssh2's 2 MiB channel window.
  readChunkBytes: 254 * 1024,
  readConcurrency: 8,
  // A second lane made 512 MiB reads about 1.5x faster here (the server's
  // per-connection process is the bottleneck); more would crowd the pool.
  readLanes: 2,
  laneMinBytes: 32 * 1024 * 1024,
  writeWindowBytes: 4 * 1024 * 1024,
};

/** Parallel unlinks while removing a folder tree. */
const DELETE_CONCURRENCY = 8;

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

const entryOf = (name: string, a: Attributes): Entry => {
  const dir = (a.mode & S_IFMT) === S_IFDIR;
  return { name, type: dir ? 'dir' : 'file', size: dir ? 0 : a.size, mtime: a.mtime * 1000 };
};

const noop = (): void => undefined;

export class SftpDriver implements StorageDriver {
  private readonly pool: SessionPool;
  private readonly tuning: SftpTuning;

  constructor(
    private readonly cfg: SftpConfig,
    tuning: Partial<SftpTuning> = {},
  ) {
    this.tuning = { ...DEFAULT_TUNING, ...tuning };
    this.pool = new SessionPool(() => openSession(cfg), { max: this.tuning.poolSize, idleMs: this.tuning.idleMs });
  }

  /** Metadata of one path (symlinks followed). Missing → `not_found`. */
  async stat(path: string): Promise<Entry> {
    const attrs = await this.pool
      .use((s) => s.stat(this.abs(path)), true)
      .catch((e) => {
        throw fromSftp(e, path);
      });
    return entryOf(baseName(path), attrs);
  }

  /**
   * Children of a folder, read batch by batch. In-flight temp files of atomic
   * writes are left out; symlinks are reported as what they point to, and
   * dangling ones are skipped. Missing folder or a file → `not_found`.
   */
  async *list(dir: string): AsyncIterable<Entry> {
    const { session, value: handle } = await this.pool
      .hold((s) => s.opendir(this.abs(dir)), true)
      .catch((e) => {
        throw fromSftp(e, dir);
      });
    try {
      for (;;) {
        const batch = await session.readdir(handle).catch((e) => {
          throw fromSftp(e, dir);
        });
        if (!batch) return;
        for (const f of batch) {
          if (f.filename.startsWith(TEMP_PREFIX)) continue;
          if ((f.attrs.mode & S_IFMT) !== S_IFLNK) {
            yield entryOf(f.filename, f.attrs);
            continue;
          }
          const target = await session.stat(posix.join(this.abs(dir), f.filename)).catch((e) => {
            if (isNoSuchFile(e)) return null;
            throw fromSftp(e, dir);
          });
          if (target) yield entryOf(f.filename, target);
        }
      }
    } finally {
      session.close(handle).catch(noop);
      this.pool.release(session);
    }
  }

  /**
   * The file's bytes (or the inclusive `range`, clamped to the file), read
   * with a window of parallel requests. Missing or a folder → `not_found`.
   */
  async read(path: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    const target = this.abs(path);
    const { session, value: opened } = await this.pool
      .hold(async (s) => {
        const handle = await s.open(target, 'r');
        try {
          return { handle, attrs: await s.fstat(handle) };
        } catch (e) {
          s.close(handle).catch(noop);
          throw e;
        }
      }, true)
      .catch((e) => {
        throw fromSftp(e, path);
      });
    if ((opened.attrs.mode & S_IFMT) === S_IFDIR) {
      session.close(opened.handle).catch(noop);
      this.pool.release(session);
      throw new AppError('not_found', { path }, undefined, `sftp: a folder, not a file: ${path}`);
    }
    const size = opened.attrs.size;
    const start = Math.min(range?.start ?? 0, size);
    const end = Math.max(start, Math.min(range?.end === undefined ? size : range.end + 1, size));
    const lanes = [{ session, handle: opened.handle }];
    if (end - start >= this.tuning.laneMinBytes)
      while (lanes.length < this.tuning.readLanes) {
        const lane = await this.openLane(session, target);
        if (!lane) break;
        lanes.push(lane);
      }
    const stream = new ParallelReader(lanes, path, {
      start,
      end,
      chunkBytes: this.tuning.readChunkBytes,
      concurrency: this.tuning.readConcurrency,
      onClose: () => lanes.forEach((l) => this.pool.release(l.session)),
    });
    return signal ? addAbortSignal(signal, stream) : stream;
  }

  /**
   * Streams into `.~fd-<random>.tmp` beside the target, then renames it into
   * place (posix-rename when the server offers it, so a replace is atomic).
   * A failed or aborted write removes the temp file; missing parent → `not_found`;
   * an existing target with `overwrite: false` → `conflict`.
   */
  async write(path: string, body: Readable, opts: WriteOptions = {}): Promise<Entry> {
    checkNameBytes(path);
    const overwrite = opts.overwrite ?? true;
    const target = this.abs(path);
    const temp = posix.join(posix.dirname(target), `${TEMP_PREFIX}${randomToken(9)}.tmp`);
    if (!overwrite && (await this.exists(path))) {
      body.destroy();
      throw new AppError('conflict', { path }, { path });
    }
    const opened = await this.pool
      .hold((s) => s.open(temp, 'w'), true)
      .catch((e) => {
        // Nobody will read the body now; let its producer (an HTTP upload) stop.
        body.destroy();
        throw fromSftp(e, path);
      });
    const session = opened.session;
    let handle: Buffer | undefined = opened.value;
    try {
      await pipeline(body, new PipelinedWriter(session, handle, path, this.tuning.writeWindowBytes), opts.signal ? { signal: opts.signal } : {});
      const closing = handle;
      handle = undefined;
      await session.close(closing).catch((e) => {
        throw fromSftp(e, path);
      });
      await this.publish(session, temp, path, overwrite);
    } catch (e) {
      if (handle) session.close(handle).catch(noop);
      await this.discard(session, temp);
      if ((e as Error).name === 'AbortError') throw new AppError('cancelled', { path });
      throw e;
    } finally {
      this.pool.release(session);
    }
    return this.stat(path);
  }

  /** Creates the folder and its missing parents below the root (the root itself must exist). Idempotent. */
  async mkdir(path: string): Promise<void> {
    checkNameBytes(path);
    await this.pool.use((s) => this.mkdirOn(s, path), true);
  }

  /** Deletes a file, or a folder with everything in it (symlinks are removed, never followed). Missing → `not_found`. */
  async delete(path: string): Promise<void> {
    if (path === '') throw new AppError('permission_denied', { path }, { reason: 'the storage root cannot be deleted' });
    await this.pool
      .use(async (s) => {
        const attrs = await s.lstat(this.abs(path));
        if ((attrs.mode & S_IFMT) === S_IFDIR) await this.removeTree(s, this.abs(path));
        else await s.unlink(this.abs(path));
      })
      .catch((e) => {
        throw fromSftp(e, path);
      });
  }

  /** Server-side rename. Target exists and !overwrite → `conflict`; missing source or target folder → `not_found`. */
  async move(from: string, to: string, opts: { overwrite: boolean }): Promise<void> {
    checkNameBytes(to);
    await this.pool.use(async (s) => {
      try {
        if (opts.overwrite && (await s.posixRename(this.abs(from), this.abs(to)))) return;
        if (opts.overwrite && (await this.existsOn(s, to))) await s.unlink(this.abs(to));
        await s.rename(this.abs(from), this.abs(to));
      } catch (e) {
        // OpenSSH says only FAILURE when the target is in the way (or a folder target is not empty).
        if (isFailure(e) && (await this.existsOn(s, to))) throw new AppError('conflict', { path: to }, { path: to });
        throw fromSftp(e, from);
      }
    });
  }

  /** The file opened on a spare session, or null when there is none or opening fails (the read then uses fewer lanes). */
  private async openLane(current: SftpSession, target: string): Promise<ReadLane | null> {
    const spare = await this.pool.acquireSpare(current);
    if (!spare) return null;
    try {
      return { session: spare, handle: await spare.open(target, 'r') };
    } catch {
      this.pool.release(spare);
      return null;
    }
  }

  /** Ends every pooled session. Idempotent. */
  async close(): Promise<void> {
    this.pool.close();
  }

  private abs(rel: string): string {
    return rel === '' ? this.cfg.root : `${this.cfg.root}/${rel}`;
  }

  private async exists(path: string): Promise<boolean> {
    return this.pool
      .use((s) => this.existsOn(s, path), true)
      .catch((e) => {
        throw fromSftp(e, path);
      });
  }

  private async existsOn(s: SftpSession, path: string): Promise<boolean> {
    try {
      await s.lstat(this.abs(path));
      return true;
    } catch (e) {
      if (isNoSuchFile(e)) return false;
      throw e;
    }
  }

  /** Renames the finished temp file onto `path`, honouring `overwrite`. */
  private async publish(s: SftpSession, temp: string, path: string, overwrite: boolean): Promise<void> {
    const target = this.abs(path);
    try {
      if (overwrite && (await s.posixRename(temp, target))) return;
      // Without posix-rename a replace cannot be atomic: the old file goes first.
      if (overwrite && (await this.existsOn(s, path))) await s.unlink(target);
      await s.rename(temp, target);
    } catch (e) {
      if (isFailure(e) && (await this.existsOn(s, path).catch(() => false))) throw new AppError('conflict', { path }, { path });
      throw fromSftp(e, path);
    }
  }

  /**
   * Removes a temp file after a failed write: at once while the session is
   * alive, else in the background on a fresh one, so the caller's error is
   * not delayed by a server that is down.
   */
  private async discard(s: SftpSession, temp: string): Promise<void> {
    if (!s.closed) {
      await s.unlink(temp).catch(noop);
      return;
    }
    this.pool.use((fresh) => fresh.unlink(temp)).catch(noop);
  }

  /** `parents`: create missing parents first (once: a second "missing" is the server's final word). */
  private async mkdirOn(s: SftpSession, path: string, parents = true): Promise<void> {
    const target = this.abs(path);
    if (path === '') {
      const attrs = await s.stat(target).catch((e) => {
        throw fromSftp(e, path);
      });
      if ((attrs.mode & S_IFMT) !== S_IFDIR) throw new AppError('conflict', { path }, { reason: 'the storage root is not a folder' });
      return;
    }
    try {
      await s.mkdir(target);
    } catch (e) {
      if (isNoSuchFile(e) && parents) {
        await this.mkdirOn(s, parentRel(path));
        return this.mkdirOn(s, path, false);
      }
      if (!isFailure(e)) throw fromSftp(e, path);
      // FAILURE is OpenSSH's answer to "already exists": fine when it is a folder (maybe made by a concurrent call).
      const attrs = await s.stat(target).catch((err) => {
        throw fromSftp(err, path);
      });
      if ((attrs.mode & S_IFMT) !== S_IFDIR) throw new AppError('conflict', { path }, { path, reason: 'a file is in the way' });
    }
  }

  private async removeTree(s: SftpSession, dir: string): Promise<void> {
    const handle = await s.opendir(dir);
    const children: Array<{ path: string; dir: boolean }> = [];
    try {
      for (let batch = await s.readdir(handle); batch; batch = await s.readdir(handle))
        for (const f of batch) children.push({ path: `${dir}/${f.filename}`, dir: (f.attrs.mode & S_IFMT) === S_IFDIR });
    } finally {
      s.close(handle).catch(noop);
    }
    for (let i = 0; i < children.length; i += DELETE_CONCURRENCY)
      await Promise.all(children.slice(i, i + DELETE_CONCURRENCY).map((c) => (c.dir ? this.removeTree(s, c.path) : s.unlink(c.path))));
    await s.rmdir(dir);
  }
}

/** Refuses a segment longer than the backend accepts, before any byte is sent. */
function checkNameBytes(path: string): void {
  for (const seg of path.split('/'))
    if (Buffer.byteLength(seg, 'utf8') > MAX_NAME_BYTES) throw new AppError('name_too_long', { max: MAX_NAME_BYTES }, { max: MAX_NAME_BYTES });
}
