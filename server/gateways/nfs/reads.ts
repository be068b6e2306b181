/**
 * Open files for READ. NFS has no open or close, and a sequential client
 * sends one READ after another (libnfs's `nfs-cp`: one 1 MiB READ at a
 * time), so what a READ costs besides its bytes is the copy's speed. The
 * file opened through the tree (`GatewayTree.open`: containment walk, stat)
 * is kept and reused by the next READs of the same place for FRESH_MS
 * (then opened through the tree again: a file replaced or changed through
 * another door is seen within that time, as a client's attribute cache
 * would; access is still checked on every call by the caller); a stage
 * published over the place forgets it at once. Kept IDLE_MS after its
 * last READ, MAX_OPEN at most.
 *
 * A file on a local disk is read positionally into a pooled buffer (given
 * back once the reply is sent), and while one READ is alone on its file
 * the next span is read ahead, so the next sequential READ finds its bytes
 * ready; other storages go through the SFTP gateway's read handle (one
 * sequential stream, reopened on a seek).
 */
import { open as openFd, type FileHandle } from 'node:fs/promises';
import type { OpenFile } from '../../files';
import { ReadHandle } from '../sftp/handles';
import type { BufferPool } from './pool';

const IDLE_MS = 10_000;
const FRESH_MS = 1000;
const MAX_OPEN = 64;

interface Ahead {
  offset: number;
  len: number;
  data: Promise<Buffer | null>;
}

interface Open {
  file: OpenFile;
  /** When the tree last opened it. */
  checked: number;
  fd: Promise<FileHandle | null>;
  stream: ReadHandle;
  timer: NodeJS.Timeout;
  /** READs of it running now. */
  active: number;
  ahead: Ahead | null;
}

/** Where a file is (storage id, path in it). */
export interface ReadPlace {
  storageId: number;
  rel: string;
}

const keyOf = (p: ReadPlace) => `${p.storageId}\0${p.rel}`;

export class OpenReads {
  private open = new Map<string, Open>();

  /** `pool`: buffers of at least the largest READ. */
  constructor(private pool: BufferPool) {}

  /**
   * Up to `len` bytes (at most the pool's buffer size) at `offset` of the
   * file at `place`, and its size; `openFile` opens it through the tree
   * when what is kept is older than FRESH_MS.
   */
  async read(place: ReadPlace, openFile: () => Promise<OpenFile>, offset: number, len: number): Promise<{ data: Buffer; size: number }> {
    const key = keyOf(place);
    const hit = await this.current(key, openFile);
    clearTimeout(hit.timer);
    hit.timer = setTimeout(() => this.drop(key), IDLE_MS).unref();
    const size = hit.file.size;
    hit.active++;
    try {
      const fd = await hit.fd;
      if (!fd) return { data: await hit.stream.read(offset, len), size };
      len = Math.max(0, Math.min(len, size - offset));
      if (len === 0) return { data: Buffer.alloc(0), size };
      const ahead = hit.ahead;
      hit.ahead = null;
      let data = ahead && ahead.offset === offset && ahead.len >= len ? await ahead.data : null;
      if (ahead && !data) void ahead.data.then((b) => b && this.pool.give(b));
      data ??= await this.pread(fd, offset, len);
      // Alone on this file (a sequential client): read the next span while this one is sent.
      if (hit.active === 1 && !hit.ahead && this.open.get(key) === hit && offset + len < size) {
        const next = { offset: offset + len, len: Math.min(len, size - offset - len) };
        hit.ahead = { ...next, data: this.pread(fd, next.offset, next.len).catch(() => null) };
      }
      return { data: data.subarray(0, len), size };
    } finally {
      hit.active--;
    }
  }

  /** Forgets what is kept of `place` (its stage was published: the next READ opens the new file). */
  forget(place: ReadPlace): void {
    this.drop(keyOf(place));
  }

  /** The kept open file at `key`, opened again through the tree when older than FRESH_MS (a changed one is replaced). */
  private async current(key: string, openFile: () => Promise<OpenFile>): Promise<Open> {
    const kept = this.open.get(key);
    if (kept && Date.now() - kept.checked < FRESH_MS) return kept;
    const file = await openFile();
    // Another READ may have opened it meanwhile.
    const hit = this.open.get(key);
    if (hit && hit.file.size === file.size && hit.file.mtime === file.mtime) {
      hit.checked = Date.now();
      return hit;
    }
    if (hit) this.drop(key);
    if (this.open.size >= MAX_OPEN) this.drop(this.open.keys().next().value!);
    const made: Open = {
      file,
      checked: Date.now(),
      fd: file.localFile().then((p) => (p ? openFd(p, 'r') : null)),
      stream: new ReadHandle(file),
      timer: setTimeout(() => this.drop(key), IDLE_MS).unref(),
      active: 0,
      ahead: null,
    };
    // A failed open is answered to its READ; the next READ tries again.
    made.fd.catch(() => this.open.get(key) === made && this.drop(key));
    this.open.set(key, made);
    return made;
  }

  private async pread(fd: FileHandle, offset: number, len: number): Promise<Buffer> {
    const buffer = this.pool.take();
    try {
      const { bytesRead } = await fd.read(buffer, 0, len, offset);
      return buffer.subarray(0, bytesRead);
    } catch (e) {
      this.pool.give(buffer);
      throw e;
    }
  }

  private drop(key: string): void {
    const hit = this.open.get(key);
    if (!hit) return;
    clearTimeout(hit.timer);
    this.open.delete(key);
    void hit.ahead?.data.then((b) => b && this.pool.give(b));
    void hit.stream.close();
    // Closed once the READs running on it are done with it.
    void hit.fd
      .then(async (fd) => {
        while (hit.active > 0) await new Promise((r) => setTimeout(r, 10));
        await fd?.close();
      })
      .catch(() => undefined);
  }

  /** Closes every open file. */
  close(): void {
    for (const key of [...this.open.keys()]) this.drop(key);
  }
}
