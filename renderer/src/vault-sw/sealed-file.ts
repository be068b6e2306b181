/**
 * One encrypted file read by plaintext ranges (docs/vault.md, "Content"; "Streaming"): its content key
 * (never the folder key), its ciphertext's length, and a way to fetch ciphertext ranges. The first read
 * fetches from the start, reads the header and decrypts chunk 0 (the true size lives there); later reads
 * fetch only the chunks a range covers. Every chunk is verified before any of its bytes leave; the
 * stream errors with `VaultError('integrity')` on anything else, so a download fails instead of saving
 * bytes it could not verify. Up to DEPTH chunks decrypt while the next ones arrive (WebCrypto works off
 * the calling thread in Chromium).
 */
import type { Bytes } from '../vault/crypto/bytes';
import { VaultError } from '../vault/crypto/errors';
import { chunkAad, chunkNonce, type Header, readHeader } from '../vault/crypto/header';
import { open } from '../vault/crypto/kdf';
import { CHUNK_BYTES, chunkCount, HEADER_BYTES, paddedOfCipher, paddedSize, TAG_BYTES } from '../vault/crypto/padding';
import { BodyReader } from './body-reader';
import { type ByteRange, chunkOf, chunkOffset, sliceOfChunk } from './ranges';

/** Chunks decrypting at once. */
const DEPTH = 3;

const integrity = (why: string) => new VaultError('integrity', `The encrypted file failed its integrity check: ${why}`);

/** Fetches ciphertext bytes [from, to] (inclusive), or the whole file for null; answers the response. */
export type CipherFetch = (range: ByteRange | null) => Promise<Response>;

/** A refused fetch (the server's status), told apart from an integrity failure. */
export class FetchRefused extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
    this.name = 'FetchRefused';
  }
}

export class SealedFile {
  readonly padded: number;
  readonly chunks: number;
  #header: Header | undefined;
  #size: number | undefined;
  /** Chunk 0's padded plaintext, kept from the first read (every media request starts by needing it). */
  #first: Bytes | undefined;
  /** Ciphertext bytes fetched so far (what a test counts to see that a seek skipped the middle). */
  fetched = 0;

  constructor(
    readonly key: CryptoKey,
    readonly cipherTotal: number,
    readonly fetchCipher: CipherFetch,
  ) {
    const padded = paddedOfCipher(cipherTotal);
    if (padded === null) throw integrity('its length is not one an encrypted file can have');
    this.padded = padded;
    this.chunks = chunkCount(padded);
  }

  /** The true size; known after `open`. */
  get size(): number | undefined {
    return this.#size;
  }

  #cipherLength(i: number): number {
    return (i < this.chunks - 1 ? CHUNK_BYTES : this.padded - i * CHUNK_BYTES) + TAG_BYTES;
  }

  #decrypt(i: number, sealed: Bytes): Promise<Bytes> {
    return open('integrity', this.key, chunkNonce(this.#header!, i), sealed, chunkAad(this.#header!, i, i === this.chunks - 1));
  }

  async #fetch(range: ByteRange | null): Promise<BodyReader> {
    const res = await this.fetchCipher(range);
    if (!res.ok || !res.body) throw new FetchRefused(res.status);
    if (range) {
      const total = Number(res.headers.get('Content-Range')?.split('/')[1]);
      if (res.status !== 206 || total !== this.cipherTotal) throw integrity('the server answered another length');
    } else {
      const length = res.headers.get('Content-Length');
      if (length !== null && Number(length) !== this.cipherTotal) throw integrity('the server answered another length');
    }
    return new BodyReader(res.body, (n) => (this.fetched += n));
  }

  /**
   * Reads the header and chunk 0 (learning the true size) from a fetch from the start: of the whole
   * file when `whole` (the reader is answered, at chunk 1, for the rest), else of chunks up to `last`.
   */
  async open(whole: boolean, last = 0): Promise<BodyReader> {
    const end = whole ? this.chunks - 1 : Math.min(last, this.chunks - 1);
    const reader = await this.#fetch(end === this.chunks - 1 ? null : { start: 0, end: chunkOffset(end) + this.#cipherLength(end) - 1 });
    try {
      this.#header = readHeader(new Uint8Array(await reader.take(HEADER_BYTES)));
      const plain = await this.#decrypt(0, await reader.take(this.#cipherLength(0)));
      const size = new DataView(plain.buffer, plain.byteOffset).getBigUint64(0);
      if (size > BigInt(Number.MAX_SAFE_INTEGER) || paddedSize(Number(size)) !== this.padded) throw integrity('its declared size does not fit its length');
      this.#size = Number(size);
      this.#first = plain;
      return reader;
    } catch (e) {
      reader.cancel();
      throw e;
    }
  }

  /** The whole file's plaintext: one fetch, chunk 0 decrypted before this answers (so the size is known). */
  async whole(onEnd: (error?: unknown) => void): Promise<ReadableStream<Uint8Array>> {
    const reader = await this.open(true);
    return this.#stream(reader, 1, { start: 0, end: this.#size! - 1 }, true, onEnd);
  }

  /** Plaintext bytes `want` (inclusive, within the size): only the chunks covering them are fetched. */
  async range(want: ByteRange, onEnd: (error?: unknown) => void): Promise<ReadableStream<Uint8Array>> {
    const first = chunkOf(want.start);
    const last = chunkOf(want.end);
    if (this.#first === undefined) {
      const reader = await this.open(false, first === 0 ? last : 0);
      if (first === 0) return this.#stream(reader, 1, want, false, onEnd);
      reader.cancel();
    }
    if (first === 0) {
      if (last === 0) return this.#stream(null, 1, want, false, onEnd);
      const reader = await this.#fetch({ start: chunkOffset(1), end: chunkOffset(last) + this.#cipherLength(last) - 1 });
      return this.#stream(reader, 1, want, false, onEnd);
    }
    const reader = await this.#fetch({ start: chunkOffset(first), end: chunkOffset(last) + this.#cipherLength(last) - 1 });
    return this.#stream(reader, first, want, false, onEnd);
  }

  /**
   * Decrypts chunks `from`.. (up to the chunk holding `want.end`) off `reader` and answers `want`'s bytes
   * of them; chunk 0 comes from memory when `want` starts there. `toEnd`: every chunk to the file's last
   * (padding alone may fill the last few: they are verified too, the final one sealed as final, so a
   * truncated file fails), and the body must end right after.
   */
  #stream(reader: BodyReader | null, from: number, want: ByteRange, toEnd: boolean, onEnd: (error?: unknown) => void): ReadableStream<Uint8Array> {
    const last = toEnd ? this.chunks - 1 : chunkOf(want.end);
    let next = from; // the next chunk to read
    let shown = chunkOf(want.start) === 0 ? 0 : from; // the next chunk to hand out
    const inFlight: Promise<Bytes>[] = [];
    let ended = false;
    const end = (e?: unknown) => {
      if (ended) return;
      ended = true;
      reader?.cancel();
      onEnd(e);
    };
    return new ReadableStream<Uint8Array>({
      pull: async (ctl) => {
        try {
          while (next <= last && inFlight.length < DEPTH) {
            const p = this.#decrypt(next, await reader!.take(this.#cipherLength(next)));
            p.catch(() => {}); // awaited below in order; this keeps a failure from counting as unhandled meanwhile
            inFlight.push(p);
            next++;
          }
          const plain = shown === 0 ? this.#first! : await inFlight.shift()!;
          const s = sliceOfChunk(shown, want.start, want.end);
          if (s.end > s.start) ctl.enqueue(plain.subarray(s.start, s.end));
          if (++shown > last) {
            if (toEnd) await reader!.end();
            ctl.close();
            end();
          }
        } catch (e) {
          ctl.error(e);
          end(e);
        }
      },
      cancel: () => end(),
    });
  }
}
