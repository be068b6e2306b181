/**
 * Staging for drivers without multipart support (sftp, webdav, ftp, smb):
 * one sparse file per session in the staging folder (the data dir's, or
 * `SERVICE_STAGING_DIR` shared by several instances: nothing about a session
 * is kept in memory, so each part may be written by another instance); each
 * part is written in place at its offset, and finalize streams the file to the
 * driver once (the driver's own write is atomic).
 */
import { createReadStream, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors';

export class StagedFiles {
  constructor(private dir: string) {}

  pathOf(id: string): string {
    return join(this.dir, `upload-${id}.part`);
  }

  /** Creates the sparse file of `size` bytes. */
  async create(id: string, size: number): Promise<void> {
    const fh = await fsp.open(this.pathOf(id), 'wx', 0o600);
    try {
      await fh.truncate(size);
    } finally {
      await fh.close();
    }
  }

  /** Writes `body` at `offset`; `not_found` when the session's file is gone (aborted or swept). */
  async write(id: string, offset: number, body: Readable, signal?: AbortSignal): Promise<void> {
    const fh = await fsp.open(this.pathOf(id), 'r+').catch(() => {
      throw new AppError('not_found', { reason: 'no such upload session' });
    });
    let pos = offset;
    const sink = new Writable({
      highWaterMark: 1 << 20,
      write(chunk: Buffer, _enc, cb) {
        fh.write(chunk, 0, chunk.length, pos).then(({ bytesWritten }) => ((pos += bytesWritten), cb()), cb);
      },
    });
    try {
      await pipeline(body, sink, { signal });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw new AppError('insufficient_storage', {}, { reason: 'no_space' }, (e as Error).message);
      throw e;
    } finally {
      await fh.close();
    }
  }

  open(id: string): Readable {
    return createReadStream(this.pathOf(id), { highWaterMark: 1 << 20 });
  }

  /** Removes the staged file. Idempotent. */
  async remove(id: string): Promise<void> {
    await fsp.rm(this.pathOf(id), { force: true });
  }

  /** Session ids of the staged files present (for the orphan sweep). */
  async present(): Promise<string[]> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    return names.filter((n) => /^upload-[A-Za-z0-9_-]+\.part$/.test(n)).map((n) => n.slice(7, -5));
  }
}
