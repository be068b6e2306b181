/**
 * A pass-through that counts bytes, refuses a body longer than allowed while
 * it streams (so an oversize body is never written whole), optionally hashes
 * it and keeps the first bytes (text for the search index).
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { AppError } from '../errors';
import { pipeFrom } from '../lib/streams';

export interface MeterOptions {
  max: number;
  hash?: boolean;
  /** Keep the body when it is at most this many bytes. */
  keep?: number;
  tooLong?: () => AppError;
}

export class Meter extends Transform {
  bytes = 0;
  private hash: Hash | null;
  private kept: Buffer[] = [];
  private hex: string | null | undefined;

  constructor(private o: MeterOptions) {
    super({ highWaterMark: 1 << 20 });
    this.hash = o.hash ? createHash('sha256') : null;
  }

  /** Pipes `source` through the meter; a source that errors or is cut off (client gone) fails the meter. */
  static through(source: Readable, o: MeterOptions): Meter {
    const m = new Meter(o);
    // A client gone mid-body is `bad_body`, not pipeline's premature close ('aborted' comes first).
    source.once('aborted', () => void (!m.writableFinished && !m.destroyed && m.destroy(new AppError('bad_body', { reason: 'the body was cut off' }))));
    // The consumer may attach only after some async setup; the error stays on the stream (`errored`) for it.
    m.on('error', () => undefined);
    return pipeFrom(source, m);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null, data?: Buffer) => void): void {
    this.bytes += chunk.length;
    if (this.bytes > this.o.max) return cb(this.o.tooLong?.() ?? new AppError('payload_too_large', { max: this.o.max }, { max: this.o.max }));
    this.hash?.update(chunk);
    if (this.o.keep && this.bytes <= this.o.keep) this.kept.push(chunk);
    cb(null, chunk);
  }

  /** Hex sha256 of what passed (only when hashing was asked for); the same answer however often asked. */
  digest(): string | null {
    this.hex ??= this.hash ? this.hash.digest('hex') : null;
    return this.hex;
  }

  /** The whole body when it fit `keep`, else undefined. */
  keptText(): string | undefined {
    return this.o.keep && this.bytes <= this.o.keep ? Buffer.concat(this.kept).toString('utf8') : undefined;
  }
}
