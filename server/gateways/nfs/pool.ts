/**
 * Buffers of one size (a 1 MiB READ or WRITE) kept for reuse. A fresh large
 * buffer costs its pages' first touch: about 3 ms a MiB measured on this
 * kind of machine, more than the disk read or write of it, so sequential
 * transfers reuse a few. Only buffers made here (or views of them) are taken
 * back; a buffer must not be given back while anything still reads it.
 */
export class BufferPool {
  private free: Buffer[] = [];
  /** Each buffer made here, by its own memory (a view of it finds it too). */
  private mine = new WeakMap<ArrayBuffer, Buffer>();

  /** `size`: bytes of each buffer; `keep`: how many idle ones are kept at most. */
  constructor(
    readonly size: number,
    private keep: number,
  ) {}

  /** A buffer of `size` bytes (contents undefined). */
  take(): Buffer {
    const b = this.free.pop();
    if (b) return b;
    // Not from Node's shared slab: its memory is its own, so a view leads back to it.
    const made = Buffer.allocUnsafeSlow(this.size);
    this.mine.set(made.buffer as ArrayBuffer, made);
    return made;
  }

  /** Takes back the buffer `b` is (or is a view of) if it came from `take`; anything else, or one already back, is ignored. */
  give(b: Buffer): void {
    const whole = this.mine.get(b.buffer as ArrayBuffer);
    if (whole && this.free.length < this.keep && !this.free.includes(whole)) this.free.push(whole);
  }
}
