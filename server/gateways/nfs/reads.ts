/**
 * Open files for READ. NFS has no open or close, so each READ would open the
 * file again; instead the file opened for one READ is kept for IDLE_MS and
 * reused by the next READ of the same file as long as its size and time are
 * unchanged (each READ still opens it through the tree: access is checked
 * every time). A file on a local disk is read positionally into a pooled
 * buffer (given back once the reply is sent); other storages go through the
 * SFTP gateway's read handle (one sequential stream, reopened on a seek).
 */
import { open as openFd, type FileHandle } from 'node:fs/promises';
import type { OpenFile } from '../../files';
import { ReadHandle } from '../sftp/handles';
import type { BufferPool } from './pool';

const IDLE_MS = 10_000;
const MAX_OPEN = 64;

interface Open {
  fd: Promise<FileHandle | null>;
  stream: ReadHandle;
  timer: NodeJS.Timeout;
}

export class OpenReads {
  private open = new Map<string, Open>();

  /** `pool`: buffers of at least the largest READ. */
  constructor(private pool: BufferPool) {}

  /** Up to `len` bytes of `file` at `offset` (len at most the pool's buffer size). */
  async read(file: OpenFile, offset: number, len: number): Promise<Buffer> {
    const key = `${file.place.storage_id}\0${file.place.rel}\0${file.size}\0${file.mtime}`;
    let hit = this.open.get(key);
    if (hit) clearTimeout(hit.timer);
    else {
      if (this.open.size >= MAX_OPEN) this.drop(this.open.keys().next().value!);
      hit = { fd: file.localFile().then((p) => (p ? openFd(p, 'r') : null)), stream: new ReadHandle(file), timer: null as unknown as NodeJS.Timeout };
      this.open.set(key, hit);
    }
    hit.timer = setTimeout(() => this.drop(key), IDLE_MS).unref();
    const fd = await hit.fd;
    if (!fd) return hit.stream.read(offset, len);
    len = Math.max(0, Math.min(len, file.size - offset));
    if (len === 0) return Buffer.alloc(0);
    const { buffer, bytesRead } = await fd.read(this.pool.take(), 0, len, offset);
    return buffer.subarray(0, bytesRead);
  }

  private drop(key: string): void {
    const hit = this.open.get(key);
    if (!hit) return;
    clearTimeout(hit.timer);
    this.open.delete(key);
    void hit.stream.close();
    void hit.fd.then((fd) => fd?.close()).catch(() => undefined);
  }

  /** Closes every open file. */
  close(): void {
    for (const key of [...this.open.keys()]) this.drop(key);
  }
}
