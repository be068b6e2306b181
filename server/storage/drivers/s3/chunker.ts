/**
 * Cuts a byte stream into Buffers of a requested size, pulling only as much
 * as it needs, so an upload holds at most the parts in flight in memory.
 */
import type { Readable } from 'node:stream';

export class Chunker {
  private readonly source: AsyncIterator<Buffer | string>;
  private leftover: Buffer | null = null;
  private ended = false;

  constructor(body: Readable) {
    this.source = body[Symbol.asyncIterator]();
  }

  /** The next `size` bytes (fewer only at the end), or null once the stream is exhausted. Rejects with the stream's error. */
  async next(size: number): Promise<Buffer | null> {
    const parts: Buffer[] = [];
    let have = 0;
    while (have < size) {
      let chunk = this.leftover;
      this.leftover = null;
      if (!chunk) {
        if (this.ended) break;
        const r = await this.source.next();
        if (r.done) {
          this.ended = true;
          break;
        }
        chunk = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
      }
      const take = Math.min(chunk.length, size - have);
      if (take < chunk.length) this.leftover = chunk.subarray(take);
      parts.push(take < chunk.length ? chunk.subarray(0, take) : chunk);
      have += take;
    }
    if (have === 0 && this.ended) return null;
    return parts.length === 1 ? parts[0] : Buffer.concat(parts, have);
  }

  /** True once the stream has nothing more; pulls (and keeps) one chunk to find out. */
  async atEnd(): Promise<boolean> {
    while (!this.leftover?.length) {
      if (this.ended) return true;
      const r = await this.source.next();
      if (r.done) this.ended = true;
      else this.leftover = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    }
    return false;
  }

  /** Stops reading and destroys the source stream. */
  async close(): Promise<void> {
    await this.source.return?.();
  }
}
