/**
 * Exact byte counts off a fetch body: a view into the piece itself when one piece holds them (no copy),
 * else copied into a buffer reused between calls (WebCrypto copies its input when called, so a chunk
 * handed to it may be overwritten by the next take).
 */
import type { Bytes } from '../vault/crypto/bytes';
import { VaultError } from '../vault/crypto/errors';
import { CHUNK_BYTES, TAG_BYTES } from '../vault/crypto/padding';

export class BodyReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #piece: Uint8Array = new Uint8Array(0);
  #buf: Bytes | undefined;

  constructor(
    body: ReadableStream<Uint8Array>,
    readonly counted: (n: number) => void,
  ) {
    this.#reader = body.getReader();
  }

  async #more(): Promise<boolean> {
    const r = await this.#reader.read();
    if (r.done) return false;
    this.counted(r.value.byteLength);
    this.#piece = r.value;
    return true;
  }

  /** The next `n` bytes (valid until the next call); `integrity` when the body ends first. */
  async take(n: number): Promise<Bytes> {
    if (this.#piece.length === 0 && !(await this.#more())) throw new VaultError('integrity', 'The encrypted file failed its integrity check: it ended early');
    if (this.#piece.length >= n) {
      const out = this.#piece.subarray(0, n);
      this.#piece = this.#piece.subarray(n);
      return out as Bytes;
    }
    this.#buf ??= new Uint8Array(CHUNK_BYTES + TAG_BYTES);
    let fill = 0;
    while (fill < n) {
      if (this.#piece.length === 0 && !(await this.#more())) throw new VaultError('integrity', 'The encrypted file failed its integrity check: it ended early');
      const part = this.#piece.subarray(0, n - fill);
      this.#buf.set(part, fill);
      fill += part.length;
      this.#piece = this.#piece.subarray(part.length);
    }
    return this.#buf.subarray(0, n);
  }

  /** The body must be over; `integrity` if it goes on. */
  async end(): Promise<void> {
    if (this.#piece.length > 0 || (await this.#more()))
      throw new VaultError('integrity', 'The encrypted file failed its integrity check: it is longer than declared');
  }

  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}
