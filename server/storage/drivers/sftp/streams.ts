/**
 * Transfer streams with several SFTP requests in flight. One request at a
 * time (ssh2's own createReadStream/createWriteStream) pays a round trip per
 * chunk; keeping a window of requests outstanding is what OpenSSH's client
 * does and what makes the throughput. Memory stays bounded by
 * `concurrency x chunkBytes` because nothing is requested beyond that window.
 */
import { Readable, Writable } from 'node:stream';
import type { SftpSession } from './client';
import { fromSftp } from './errors';

export interface ReaderOptions {
  /** First byte to read. */
  start: number;
  /** One past the last byte to read. */
  end: number;
  chunkBytes: number;
  /** Reads outstanding per lane. */
  concurrency: number;
  /** Called once when the stream is finished or destroyed, after its handles are closed. */
  onClose(): void;
}

/** The same file opened on one session. Several lanes spread a big read over several server processes. */
export interface ReadLane {
  session: SftpSession;
  handle: Buffer;
}

interface ReadRequest {
  pos: number;
  len: number;
  data?: Buffer;
}

/**
 * Reads [start, end) in order, with up to `concurrency` reads outstanding on
 * each lane; each request goes to the least busy lane and results are pushed
 * in file order whichever lane answers first.
 */
export class ParallelReader extends Readable {
  private queue: ReadRequest[] = [];
  private next: number;
  private ended = false;
  private readonly inflight: number[];

  constructor(
    private readonly lanes: ReadLane[],
    private readonly path: string,
    private readonly opts: ReaderOptions,
  ) {
    super({ highWaterMark: opts.chunkBytes * 2 });
    this.next = opts.start;
    this.inflight = lanes.map(() => 0);
  }

  override _read(): void {
    this.fill();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.queue = [];
    Promise.all(this.lanes.map((l) => l.session.close(l.handle).catch(() => undefined))).finally(() => this.opts.onClose());
    cb(err);
  }

  private idlestLane(): number {
    return this.inflight.reduce((best, n, i) => (n < this.inflight[best] ? i : best), 0);
  }

  private fill(): void {
    while (!this.destroyed && this.next < this.opts.end) {
      const lane = this.idlestLane();
      if (this.inflight[lane] >= this.opts.concurrency) break;
      const req = { pos: this.next, len: Math.min(this.opts.chunkBytes, this.opts.end - this.next) };
      this.next += req.len;
      this.queue.push(req);
      this.issue(req, lane);
    }
    if (this.queue.length === 0 && this.next >= this.opts.end && !this.ended) {
      this.ended = true;
      this.push(null);
    }
  }

  private issue(req: ReadRequest, lane: number): void {
    const { session, handle } = this.lanes[lane];
    const buf = Buffer.allocUnsafe(req.len);
    this.inflight[lane]++;
    session
      .call<Buffer>('read', (done) => session.sftp.read(handle, buf, 0, req.len, req.pos, (err, nb) => done(err, buf.subarray(0, nb ?? 0))))
      .then(
        (data) => {
          this.inflight[lane]--;
          req.data = data;
          this.flush();
        },
        (err) => this.destroy(fromSftp(err, this.path)),
      );
  }

  /** Pushes the finished requests at the head of the queue, in file order. */
  private flush(): void {
    if (this.destroyed) return;
    let wantMore = true;
    while (this.queue[0]?.data) {
      const req = this.queue.shift()!;
      const data = req.data!;
      if (data.length === 0) {
        // The file got shorter since we opened it: end where it ends now.
        this.queue = [];
        this.next = this.opts.end;
        break;
      }
      if (data.length < req.len) {
        // A short read: fetch the rest before anything that follows it.
        const rest = { pos: req.pos + data.length, len: req.len - data.length };
        this.queue.unshift(rest);
        this.issue(rest, this.idlestLane());
      }
      wantMore = this.push(data);
    }
    if (wantMore) this.fill();
  }
}

/**
 * Writes sequentially into an open file handle with up to `windowBytes`
 * outstanding (counted in bytes, since callers' chunk sizes vary from a few KiB
 * to MiBs). A chunk larger than one request may carry is sent as several
 * requests at once: left to ssh2, its pieces would go one round trip after
 * another, so a window of 1 MiB chunks kept only a few requests in flight.
 * The first failed write fails the stream.
 */
export class PipelinedWriter extends Writable {
  private pos = 0;
  private inflight = 0;
  private inflightBytes = 0;
  private failure: Error | undefined;
  private waiting: ((err?: Error) => void) | undefined;
  private finishing: ((err?: Error) => void) | undefined;
  private readonly pieceBytes: number;

  constructor(
    private readonly session: SftpSession,
    private readonly handle: Buffer,
    private readonly path: string,
    private readonly windowBytes: number,
  ) {
    super();
    this.pieceBytes = session.maxWriteBytes;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error) => void): void {
    if (this.failure) return cb(this.failure);
    for (let off = 0; off < chunk.length; off += this.pieceBytes) this.send(chunk.subarray(off, off + this.pieceBytes));
    if (this.inflightBytes < this.windowBytes) cb();
    else this.waiting = cb;
  }

  override _final(cb: (err?: Error) => void): void {
    if (this.inflight === 0) cb(this.failure);
    else this.finishing = cb;
  }

  private send(piece: Buffer): void {
    const pos = this.pos;
    this.pos += piece.length;
    this.inflight++;
    this.inflightBytes += piece.length;
    this.session
      .call<void>('write', (done) => this.session.sftp.write(this.handle, piece, 0, piece.length, pos, done))
      .then(
        () => this.settle(piece.length),
        (err) => this.settle(piece.length, fromSftp(err, this.path)),
      );
  }

  private settle(bytes: number, err?: Error): void {
    this.inflight--;
    this.inflightBytes -= bytes;
    this.failure ??= err;
    if (this.waiting && (this.failure || this.inflightBytes < this.windowBytes)) {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting(this.failure);
    }
    if (this.inflight === 0 && this.finishing) {
      const finishing = this.finishing;
      this.finishing = undefined;
      finishing(this.failure);
    }
  }
}
