/**
 * XDR (RFC 4506) as NFSv3 uses it: big-endian 32-bit words, 64-bit hypers,
 * opaque data and strings padded to four bytes. The reader never reads past
 * its buffer and never trusts a length field: anything short or oversized is
 * `XdrError`, which the RPC layer answers with GARBAGE_ARGS.
 */

/** Input that is not valid XDR for what was expected. */
export class XdrError extends Error {}

const pad4 = (n: number) => (4 - (n & 3)) & 3;

export class XdrReader {
  constructor(
    private buf: Buffer,
    public pos = 0,
  ) {}

  /** Bytes not read yet. */
  get left(): number {
    return this.buf.length - this.pos;
  }

  private need(n: number): void {
    if (n > this.left) throw new XdrError(`${n} bytes wanted, ${this.left} left`);
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  bool(): boolean {
    const v = this.u32();
    if (v > 1) throw new XdrError(`bool ${v}`);
    return v === 1;
  }

  /** An unsigned hyper as a number; past 2^53 → XdrError (no file or offset here is that large). */
  u64(): number {
    const hi = this.u32();
    const lo = this.u32();
    if (hi > 0x1fffff) throw new XdrError('hyper past 2^53');
    return hi * 0x1_0000_0000 + lo;
  }

  /** Variable-length opaque data of at most `max` bytes (a view, not a copy). */
  opaque(max: number): Buffer {
    const n = this.u32();
    if (n > max) throw new XdrError(`opaque of ${n} bytes, at most ${max}`);
    return this.fixed(n);
  }

  /** Fixed-length opaque data (a view). */
  fixed(n: number): Buffer {
    this.need(n + pad4(n));
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n + pad4(n);
    return v;
  }

  /** A string of at most `max` bytes, as UTF-8. */
  string(max: number): string {
    return this.opaque(max).toString('utf8');
  }
}

/** Builds XDR into a buffer that grows as needed. */
export class XdrWriter {
  private buf: Buffer;
  pos = 0;

  constructor(size = 512) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u32(v: number): this {
    this.room(4);
    this.buf.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
    return this;
  }

  bool(v: boolean): this {
    return this.u32(v ? 1 : 0);
  }

  u64(v: number): this {
    const n = Math.max(0, Math.floor(v));
    return this.u32(Math.floor(n / 0x1_0000_0000)).u32(n % 0x1_0000_0000);
  }

  /** Variable-length opaque data: length, bytes, padding. */
  opaque(b: Buffer): this {
    return this.u32(b.length).fixed(b);
  }

  /** Fixed-length opaque data with its padding. */
  fixed(b: Buffer): this {
    const p = pad4(b.length);
    this.room(b.length + p);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
    this.buf.fill(0, this.pos, this.pos + p);
    this.pos += p;
    return this;
  }

  string(s: string): this {
    return this.opaque(Buffer.from(s, 'utf8'));
  }

  /** The bytes written so far (a view). */
  done(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
