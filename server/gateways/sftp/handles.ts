/**
 * What an SFTP handle stands for: a file open for reading (positional reads
 * on a local disk, else one sequential stream that is reopened on a seek), a
 * file open for writing (the bytes stream through `GatewayTree.write` into
 * the driver's temp file and are published atomically at CLOSE), or a folder
 * listing streamed from the catalogue.
 */
import { open as openFd, type FileHandle } from 'node:fs/promises';
import { PassThrough, type Readable } from 'node:stream';
import { AppError } from '../../errors';
import type { OpenFile } from '../../files';
import type { GatewayEntry, GatewayTree } from '../index';

/** Reads from a local disk go by blocks this big: one file system call serves 16 OpenSSH requests. */
const BLOCK = 512 * 1024;
/** Out-of-order writes held in memory while an earlier gap fills (pipelined clients); more is refused. */
const REORDER_MAX_BYTES = 8 << 20;

export class ReadHandle {
  readonly kind = 'read';
  private fd: Promise<FileHandle | null> | null = null;
  private stream: { it: AsyncIterator<Buffer>; pos: number; rest: Buffer; source: Readable } | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** The block being read and its neighbours (at most three: 1.5 MiB a handle). */
  private blocks = new Map<number, Promise<Buffer>>();

  constructor(readonly file: OpenFile) {}

  /** Up to `len` bytes at `offset`; an empty buffer at or past the end. */
  read(offset: number, len: number): Promise<Buffer> {
    if (offset >= this.file.size || len <= 0) return Promise.resolve(Buffer.alloc(0));
    len = Math.min(len, this.file.size - offset);
    this.fd ??= this.file.localFile().then((p) => (p ? openFd(p, 'r') : null));
    return this.fd.then((fd) => {
      if (fd) return this.fromDisk(fd, offset, len);
      // A stream answers one request at a time, in order; pipelined requests queue here.
      const next = this.queue.then(() => this.fromStream(offset, len));
      this.queue = next.catch(() => undefined);
      return next;
    });
  }

  private fromDisk(fd: FileHandle, offset: number, len: number): Promise<Buffer> {
    const i = Math.floor(offset / BLOCK);
    if (Math.floor((offset + len - 1) / BLOCK) !== i) return fd.read(Buffer.allocUnsafe(len), 0, len, offset).then((r) => r.buffer.subarray(0, r.bytesRead));
    const at = offset - i * BLOCK;
    const here = this.block(fd, i).then((b) => b.subarray(at, at + len));
    // Clients read front to back: have the next block ready when they get there.
    if ((i + 1) * BLOCK < this.file.size) this.block(fd, i + 1).catch(() => undefined);
    return here;
  }

  private block(fd: FileHandle, i: number): Promise<Buffer> {
    let b = this.blocks.get(i);
    if (!b) {
      const n = Math.min(BLOCK, this.file.size - i * BLOCK);
      b = fd.read(Buffer.allocUnsafe(n), 0, n, i * BLOCK).then((r) => r.buffer.subarray(0, r.bytesRead));
      this.blocks.set(i, b);
      for (const k of this.blocks.keys()) if (k < i - 1 || k > i + 1) this.blocks.delete(k);
    }
    return b;
  }

  private async fromStream(offset: number, len: number): Promise<Buffer> {
    if (!this.stream || this.stream.pos !== offset) {
      this.stream?.source.destroy();
      const source = await this.file.read({ start: offset, end: this.file.size - 1 });
      this.stream = { it: source[Symbol.asyncIterator](), pos: offset, rest: Buffer.alloc(0), source };
    }
    const s = this.stream;
    const parts: Buffer[] = [];
    let n = 0;
    while (n < len) {
      if (s.rest.length === 0) {
        const r = await s.it.next();
        if (r.done) break;
        s.rest = r.value;
      }
      const piece = s.rest.subarray(0, len - n);
      s.rest = s.rest.subarray(piece.length);
      parts.push(piece);
      n += piece.length;
    }
    s.pos += n;
    return parts.length === 1 ? parts[0] : Buffer.concat(parts, n);
  }

  /** Releases the descriptor or stream. Idempotent. */
  async close(): Promise<void> {
    this.blocks.clear();
    this.stream?.source.destroy();
    this.stream = null;
    const fd = await this.fd?.catch(() => null);
    this.fd = null;
    await fd?.close().catch(() => undefined);
  }
}

/**
 * A file being written. Bytes arrive as (offset, data) and stream on in
 * order; a write ahead of a gap waits in memory (REORDER_MAX_BYTES) until the
 * gap fills. A write behind what was already streamed (a seek back, a resumed
 * upload at an offset) is `unsupported`: the file is written whole or not at
 * all. Nothing is visible until `close` has finished; `abandon` (the client
 * went away) drops the temp file and announces nothing.
 */
export class WriteHandle {
  readonly kind = 'write';
  // Above what an OpenSSH client keeps in flight (64 x 32 KiB), so a steady upload is answered at once.
  private body = new PassThrough({ highWaterMark: 4 << 20 });
  private pos = 0;
  private ahead = new Map<number, Buffer>();
  private aheadBytes = 0;
  private abort = new AbortController();
  private failed: unknown = null;
  private result: Promise<unknown>;
  private draining: Promise<void> | null = null;

  /**
   * `roomFor(n)`: whether the session may hold `n` more bytes in memory (a
   * client that sends without waiting for answers fills its uploads' buffers
   * faster than storage drains them; past the session's budget it is refused).
   */
  constructor(
    readonly tree: GatewayTree,
    readonly path: string,
    overwrite: boolean,
    private roomFor: (bytes: number) => boolean,
  ) {
    this.result = tree.write(path, this.body, { overwrite, signal: this.abort.signal }).catch((e) => {
      this.failed ??= e;
      // Wakes the writes waiting for 'drain'.
      this.body.destroy();
      throw e;
    });
    // A failure is reported by the next write or the close; never unhandled.
    this.result.catch(() => undefined);
    this.body.on('error', () => undefined);
  }

  /** Takes `data` at `offset`; resolves when the stream can take more (back-pressure on the client). */
  async write(offset: number, data: Buffer): Promise<void> {
    try {
      await this.take(offset, data);
    } catch (e) {
      // One refused write spoils the file: the close that follows must not publish the rest.
      this.failed ??= e;
      this.abandon();
      throw e;
    }
  }

  private async take(offset: number, data: Buffer): Promise<void> {
    if (this.failed) throw this.failed;
    if (!this.roomFor(data.length)) throw new AppError('server_busy', {}, { reason: 'write_buffer_full' }, 'more unanswered writes than the session may hold');
    if (offset < this.pos) throw new AppError('unsupported', {}, { reason: 'random_access_write' }, 'a write behind what was already written');
    if (offset > this.pos) {
      if (this.aheadBytes + data.length > REORDER_MAX_BYTES || this.ahead.has(offset)) {
        throw new AppError('unsupported', {}, { reason: 'random_access_write' }, 'a write too far ahead of the gap');
      }
      this.ahead.set(offset, data);
      this.aheadBytes += data.length;
      return;
    }
    let more = this.push(data);
    for (let next = this.ahead.get(this.pos); next; next = this.ahead.get(this.pos)) {
      this.ahead.delete(this.pos);
      this.aheadBytes -= next.length;
      more = this.push(next);
    }
    if (!more) await this.drained();
  }

  /** Publishes the file (atomically, through the write gate). A gap left unfilled → `unsupported`, nothing published. */
  async close(): Promise<void> {
    if (this.failed) throw this.failed;
    if (this.ahead.size > 0) {
      this.abandon();
      throw new AppError('unsupported', {}, { reason: 'random_access_write' }, 'the file has a gap');
    }
    this.body.end();
    await this.result;
  }

  /** Bytes received and not yet taken by the storage (queued in the stream or waiting for a gap). */
  get held(): number {
    return (this.body.destroyed ? 0 : this.body.writableLength) + this.aheadBytes;
  }

  /** Bytes written so far, in order. */
  get written(): number {
    return this.pos;
  }

  /** Drops the upload: the temp file goes, nothing is announced. Idempotent. */
  abandon(): void {
    this.ahead.clear();
    this.aheadBytes = 0;
    this.abort.abort();
    this.body.destroy(new Error('the SFTP client went away'));
  }

  /**
   * Hands `data` on as it is: ssh2 decrypts each packet into a buffer of its
   * own that it never reuses, so keeping a view costs no copy. False when the
   * stream wants a pause.
   */
  private push(data: Buffer): boolean {
    this.pos += data.length;
    return this.body.write(data) && !this.body.writableNeedDrain;
  }

  /** One wait for 'drain' shared by every write that asks while the stream is full. */
  private drained(): Promise<void> {
    if (this.body.destroyed) return this.failed ? Promise.reject(this.failed) : Promise.resolve();
    this.draining ??= new Promise<void>((resolve) => {
      const done = () => {
        this.body.off('drain', done);
        this.body.off('close', done);
        this.draining = null;
        resolve();
      };
      this.body.once('drain', done).once('close', done);
    });
    return this.draining.then(() => {
      if (this.failed) throw this.failed;
    });
  }
}

/** A folder being listed: entries are pulled a batch at a time from the catalogue stream. */
export class DirHandle {
  readonly kind = 'dir';
  private done = false;

  constructor(private entries: AsyncIterator<GatewayEntry>) {}

  /** The next batch (at most `max`), or null once the listing is over. */
  async next(max: number): Promise<GatewayEntry[] | null> {
    if (this.done) return null;
    const out: GatewayEntry[] = [];
    while (out.length < max) {
      const r = await this.entries.next();
      if (r.done) {
        this.done = true;
        break;
      }
      out.push(r.value);
    }
    return out.length ? out : null;
  }

  async close(): Promise<void> {
    this.done = true;
    await this.entries.return?.(undefined);
  }
}

export type Handle = ReadHandle | WriteHandle | DirHandle;
