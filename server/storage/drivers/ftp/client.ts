/**
 * StorageDriver over FTP/FTPS with basic-ftp. Sessions come from a pool of at
 * most two (one control connection does one thing at a time); every exchange
 * runs under basic-ftp's socket timeout. Writes upload to a hidden temp name
 * in the target folder and publish it with RNFR/RNTO. Times: MLSD when the
 * server has it, else LIST plus MDTM per file (folders keep LIST's minutes).
 */
import { PassThrough, Transform, Writable, type Readable } from 'node:stream';
import type { Client } from 'basic-ftp';
import { AppError, isAppError } from '../../../errors';
import { randomToken } from '../../../lib/crypto';
import { baseName, joinRel, parentRel, TEMP_PREFIX } from '../../../lib/paths';
import type { ByteRange, Entry, StorageDriver, WriteOptions } from '../../types';
import { unreachable } from '../remote/errors';
import { countBytes } from '../remote/streams';
import { pipeFrom } from '../../../lib/streams';
import type { FtpConfig } from './config';
import { openSession } from './connect';
import { ftpError, replyCode } from './errors';
import { parseListTime } from './list-time';
import { FtpPool, type Lease } from './pool';

const MAX_SESSIONS = 2;
const READ_HIGH_WATER_MARK = 1024 * 1024;
/** See delayEmptyEnd. */
const EMPTY_TLS_UPLOAD_DELAY_MS = 100;

export class FtpStorage implements StorageDriver {
  private readonly pool: FtpPool;
  /** Absolute root, known after the first session resolved a relative one. */
  private base: string | null = null;
  private rootReady: Promise<void> | null = null;

  constructor(private readonly cfg: FtpConfig) {
    this.pool = new FtpPool(() => openSession(cfg), MAX_SESSIONS);
  }

  async stat(path: string): Promise<Entry> {
    await this.ready();
    return this.session(path, async (c) => {
      if (path === '') {
        await this.cd(c, '');
        return { name: '', type: 'dir', size: 0, mtime: 0 };
      }
      const file = await this.fileEntry(c, path);
      if (file) return file;
      const found = (await this.listIn(c, parentRel(path))).find((e) => e.name === baseName(path));
      if (!found) throw new AppError('not_found', { path });
      return found;
    });
  }

  async *list(dir: string): AsyncIterable<Entry> {
    await this.ready();
    yield* await this.session(dir, (c) => this.listIn(c, dir));
  }

  async read(path: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    await this.ready();
    const size = await this.session(path, (c) => c.size(this.abs(path)));
    const start = range?.start ?? 0;
    if (range && start >= size && size > 0) throw new AppError('range_not_satisfiable', { path });
    const length = Math.max(Math.min(range?.end ?? size - 1, size - 1) - start + 1, 0);
    return this.download(await this.lease(), path, start, length, start + length < size, signal);
  }

  async write(path: string, body: Readable, opts: WriteOptions = {}): Promise<Entry> {
    let lease: Lease;
    try {
      await this.ready();
      lease = await this.lease();
    } catch (e) {
      body.destroy();
      throw e;
    }
    const c = lease.client;
    const target = this.abs(path);
    const temp = `${this.abs(parentRel(path))}/${TEMP_PREFIX}${randomToken(9)}`;
    let sourceError: unknown;
    let uploaded = false;
    const onAbort = () => c.close();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await this.cd(c, parentRel(path), path);
      // FTP has no atomic no-clobber rename: this check is the best it offers.
      if (opts.overwrite === false && (await this.exists(c, path))) throw new AppError('conflict', { path });
      const counted = countBytes(
        opts.size,
        () => undefined,
        (e) => {
          sourceError ??= e;
        },
      );
      const source = this.cfg.secure === 'off' ? counted : pipeFrom(counted, delayEmptyEnd());
      // Only the body's own failure is recorded; a broken upload destroys the chain back to it.
      pipeFrom(body, counted, (e) => (sourceError ??= e));
      uploaded = true;
      await c.uploadFrom(source, temp);
      await this.publish(c, temp, target, path);
      return (await this.fileEntry(c, path)) ?? { name: baseName(path), type: 'file', size: opts.size ?? 0, mtime: Date.now() };
    } catch (e) {
      body.destroy();
      // After a broken upload the session's state is unknown (FTP ends a STOR by closing
      // the data connection, so the server may still answer): never reuse it.
      if (uploaded) c.close();
      lease.release();
      if (uploaded) await this.discard(temp);
      if (opts.signal?.aborted) throw new AppError('cancelled');
      throw sourceError ?? ftpError(e, path, 'permission_denied');
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      lease.release();
    }
  }

  async mkdir(path: string): Promise<void> {
    await this.ready();
    await this.session(path, (c) => this.mkdirp(c, this.abs(path), path));
  }

  async delete(path: string): Promise<void> {
    await this.ready();
    await this.session(path, async (c) => {
      const abs = this.abs(path);
      try {
        await c.remove(abs);
        return;
      } catch (e) {
        if (replyCode(e) !== 550) throw e;
      }
      await this.cd(c, path);
      await c.removeDir(abs);
    });
  }

  async move(from: string, to: string, opts: { overwrite: boolean }): Promise<void> {
    await this.ready();
    await this.session(from, async (c) => {
      if (!opts.overwrite && (await this.exists(c, to))) throw new AppError('conflict', { path: to });
      try {
        await c.rename(this.abs(from), this.abs(to));
      } catch (e) {
        if (replyCode(e) === undefined) throw e;
        // One refusal code for both ends: find out which one is missing.
        if (!(await this.exists(c, from))) throw new AppError('not_found', { path: from });
        if (!(await this.exists(c, parentRel(to)))) throw new AppError('not_found', { path: to });
        throw ftpError(e, to, 'permission_denied');
      }
    });
  }

  async close(): Promise<void> {
    this.pool.close();
  }

  private abs(rel: string): string {
    if (this.base === null) throw new Error('ftp driver used before its root was resolved');
    return rel === '' ? this.base : `${this.base === '/' ? '' : this.base}/${rel}`;
  }

  /** Resolves a relative root against the login folder and creates the root, once per driver. */
  private ready(): Promise<void> {
    this.rootReady ??= this.session('', async (c) => {
      const home = this.cfg.root.startsWith('/') ? '' : (await c.pwd()).replace(/\/+$/, '');
      const base = this.cfg.root.startsWith('/') ? this.cfg.root : `${home}/${this.cfg.root}`;
      await this.mkdirp(c, base, '');
      this.base = base;
    }).catch((e: unknown) => {
      this.rootReady = null;
      throw e;
    });
    return this.rootReady;
  }

  private async lease(): Promise<Lease> {
    try {
      return await this.pool.acquire();
    } catch (e) {
      throw ftpError(e, '');
    }
  }

  /**
   * Runs `fn` on a pooled session; failures are mapped with 550 meaning "not
   * found". A kept session that turns out dead (the server restarted while it
   * was idle) is replaced and `fn` runs once more on a fresh one.
   */
  private async session<T>(path: string, fn: (c: Client) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const lease = await this.lease();
      try {
        return await fn(lease.client);
      } catch (e) {
        const stale = lease.reused && lease.client.closed && replyCode(e) === undefined && !isAppError(e);
        if (!stale || attempt > 0) throw ftpError(e, path);
      } finally {
        lease.release();
      }
    }
  }

  /** CWD into a storage folder; a missing folder (or a file) is `not_found` for `reportAs`. */
  private async cd(c: Client, dir: string, reportAs = dir): Promise<void> {
    try {
      await c.cd(this.abs(dir));
    } catch (e) {
      throw ftpError(e, reportAs);
    }
  }

  /** A file's entry from SIZE + MDTM, or null when the path is no file. */
  private async fileEntry(c: Client, path: string): Promise<Entry | null> {
    let size: number;
    try {
      size = await c.size(this.abs(path));
    } catch (e) {
      if (replyCode(e) === 550) return null;
      throw e;
    }
    return { name: baseName(path), type: 'file', size, mtime: await this.exactTime(c, path, 0) };
  }

  private async exactTime(c: Client, path: string, fallback: number): Promise<number> {
    try {
      return (await c.lastMod(this.abs(path))).getTime();
    } catch (e) {
      if (replyCode(e) !== undefined) return fallback;
      throw e;
    }
  }

  /**
   * The folder's children. LIST runs in the folder itself (after CWD), never on
   * a path argument: servers read that argument as ls options and globs.
   */
  private async listIn(c: Client, dir: string): Promise<Entry[]> {
    await this.cd(c, dir);
    const out: Entry[] = [];
    for (const info of await c.list()) {
      if (info.name === '.' || info.name === '..' || info.name.startsWith(TEMP_PREFIX)) continue;
      if (!info.isFile && !info.isDirectory) continue; // symlinks and devices are not followed
      const listed = info.modifiedAt?.getTime() ?? parseListTime(info.rawModifiedAt);
      const exact = info.isFile && !info.modifiedAt;
      out.push({
        name: info.name,
        type: info.isDirectory ? 'dir' : 'file',
        size: info.isFile ? info.size : 0,
        mtime: exact ? await this.exactTime(c, joinRel(dir, info.name), listed) : listed,
      });
    }
    return out;
  }

  private async exists(c: Client, path: string): Promise<boolean> {
    if (await this.fileEntry(c, path)) return true;
    try {
      await c.cd(this.abs(path));
      return true;
    } catch (e) {
      if (replyCode(e) === 550) return false;
      throw e;
    }
  }

  /** RNFR/RNTO; a server that refuses to rename onto a file gets the file removed first. */
  private async publish(c: Client, temp: string, target: string, path: string): Promise<void> {
    try {
      await c.rename(temp, target);
    } catch (e) {
      if (replyCode(e) !== 550 && replyCode(e) !== 553) throw e;
      if (!(await this.fileEntry(c, path))) throw e;
      await c.remove(target);
      await c.rename(temp, target);
    }
  }

  /** Best-effort removal of a temp file on a fresh session; the listing hides it if this fails. */
  private async discard(temp: string): Promise<void> {
    try {
      await this.pool.run((c) => c.remove(temp, true));
    } catch {
      // The server is gone; the temp name stays hidden from listings.
    }
  }

  private async mkdirp(c: Client, abs: string, path: string): Promise<void> {
    try {
      await c.ensureDir(abs);
    } catch (e) {
      throw ftpError(e, path, 'permission_denied');
    }
  }

  /**
   * Streams `length` bytes from `start` through a session held until the
   * transfer ends. The stream ends only after the server confirms the whole
   * transfer (226), so a dropped connection fails it instead of ending it short.
   */
  private download(lease: Lease, path: string, start: number, length: number, stopEarly: boolean, signal?: AbortSignal): Readable {
    const c = lease.client;
    const out = new PassThrough({ highWaterMark: READ_HIGH_WATER_MARK });
    if (length === 0) {
      lease.release();
      out.end();
      return out;
    }
    let got = 0;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      if (error) out.destroy(error);
      else out.end();
    };
    const sink = new Writable({
      highWaterMark: READ_HIGH_WATER_MARK,
      write(chunk: Buffer, _enc, cb) {
        if (settled) return cb();
        const part = chunk.subarray(0, length - got);
        got += part.length;
        const more = out.write(part);
        if (got >= length && stopEarly) {
          // FTP cannot stop a RETR politely; closing this session is the abort.
          finish();
          c.close();
        }
        if (more) cb();
        else out.once('drain', () => cb());
      },
    });
    const abort = () => c.close();
    signal?.addEventListener('abort', abort, { once: true });
    out.once('close', () => {
      if (!settled) {
        settled = true;
        c.close();
      }
    });
    c.downloadTo(sink, this.abs(path), start)
      .then(
        () => finish(got === length ? undefined : unreachable(`transfer ended after ${got} of ${length} bytes`)),
        (e: unknown) => finish(signal?.aborted ? new AppError('cancelled') : ftpError(e, path)),
      )
      .finally(() => {
        signal?.removeEventListener('abort', abort);
        lease.release();
      });
    return out;
  }
}

/**
 * vsftpd (3.0.3, OpenSSL 3) kills the session when a TLS data connection is
 * closed within about a millisecond of its handshake, which is what an empty
 * upload does. Holding the end of an empty body briefly avoids that race;
 * bodies with data are unaffected.
 */
function delayEmptyEnd(): Transform {
  let empty = true;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (chunk.length > 0) empty = false;
      cb(null, chunk);
    },
    flush(cb) {
      if (empty) setTimeout(cb, EMPTY_TLS_UPLOAD_DELAY_MS);
      else cb();
    },
  });
}
