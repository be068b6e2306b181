/**
 * Decrypting a file (docs/vault.md, "Content"). Every chunk is verified before any of its bytes leave;
 * a damaged, reordered, swapped, truncated or extended file is `VaultError('integrity')`.
 */
import type { Bytes } from './bytes';
import { VaultError } from './errors';
import { FolderKeyring } from './folder-keys';
import { chunkAad, chunkNonce, CONTENT_KEY_BYTES, type Header, readHeader, unwrapContentKey } from './header';
import { importAesKey, open } from './kdf';
import { CHUNK_BYTES, chunkCount, HEADER_BYTES, paddedOfCipher, paddedSize, SIZE_PREFIX_BYTES, TAG_BYTES } from './padding';

/** What opens a file: the folder's keyring (members), or the file's own content key (a link's `#k=`). */
export type ContentKeySource = FolderKeyring | { contentKey: Uint8Array };

const integrity = (why: string) => new VaultError('integrity', `The encrypted file failed its integrity check: ${why}`);

/** The content key inside a file's header (its first 94 bytes), for a link. */
export async function contentKeyOf(headerBytes: Uint8Array<ArrayBuffer>, ring: FolderKeyring): Promise<Bytes> {
  return unwrapContentKey(readHeader(headerBytes), ring);
}

/** One file's chunks, once its header is read: `decrypt` may run ahead; `content` must be called in order from chunk 0. */
class FileOpener {
  readonly chunks: number;
  #size: number | undefined;

  private constructor(
    readonly padded: number,
    readonly header: Header,
    readonly aes: CryptoKey,
  ) {
    this.chunks = chunkCount(padded);
  }

  static async create(headerBytes: Bytes, key: ContentKeySource, cipherTotal: number): Promise<FileOpener> {
    const padded = paddedOfCipher(cipherTotal);
    if (padded === null) throw integrity('its length is not one an encrypted file can have');
    const header = readHeader(headerBytes);
    let raw: Uint8Array<ArrayBuffer>;
    if (key instanceof FolderKeyring) raw = await unwrapContentKey(header, key);
    else if (key.contentKey.length === CONTENT_KEY_BYTES) raw = new Uint8Array(key.contentKey);
    else throw new VaultError('bad_link_key');
    return new FileOpener(padded, header, await importAesKey(raw));
  }

  /** Ciphertext length of chunk `i`. */
  cipherLength(i: number): number {
    return (i < this.chunks - 1 ? CHUNK_BYTES : this.padded - i * CHUNK_BYTES) + TAG_BYTES;
  }

  /** Chunk `i`'s padded plaintext. Hands `sealed` to WebCrypto before returning, which copies it: the caller may reuse it. */
  decrypt(i: number, sealed: Bytes): Promise<Bytes> {
    return open('integrity', this.aes, chunkNonce(this.header, i), sealed, chunkAad(this.header, i, i === this.chunks - 1));
  }

  /** The file's bytes within chunk `i`'s padded plaintext (a view): the size prefix and the padding cut off. */
  content(i: number, plain: Bytes): Bytes {
    if (i === 0) {
      const size = new DataView(plain.buffer, plain.byteOffset).getBigUint64(0);
      if (size > BigInt(Number.MAX_SAFE_INTEGER) || paddedSize(Number(size)) !== this.padded) throw integrity('its declared size does not fit its length');
      this.#size = Number(size);
    }
    const p0 = i * CHUNK_BYTES;
    const from = Math.max(SIZE_PREFIX_BYTES - p0, 0);
    const to = Math.max(from, Math.min(plain.length, SIZE_PREFIX_BYTES + this.#size! - p0));
    return plain.subarray(from, to);
  }
}

/**
 * Decrypts a ciphertext of `cipherTotal` bytes (the listing's size) arriving in pieces of any size. Holds
 * about two chunks: the one being gathered and the one being decrypted. A piece that holds a whole chunk
 * is decrypted from a view of it, without a copy.
 */
export function decryptStream(key: ContentKeySource, cipherTotal: number): TransformStream<Uint8Array, Uint8Array> {
  const headerBytes = new Uint8Array(HEADER_BYTES);
  let opener: FileOpener | undefined;
  let received = 0;
  let index = 0; // the chunk being gathered
  let gathered: Bytes | undefined;
  let fill = 0;
  let pending: { index: number; plain: Promise<Bytes> } | undefined;

  const emit = async (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (!pending) return;
    const content = opener!.content(pending.index, await pending.plain);
    if (content.length) controller.enqueue(content);
  };
  // Starts decrypting chunk `index`, then emits the previous one: decryption of one overlaps gathering of the next.
  const submit = async (opener: FileOpener, sealed: Bytes, controller: TransformStreamDefaultController<Uint8Array>) => {
    const next = { index, plain: opener.decrypt(index, sealed) };
    next.plain.catch(() => {}); // awaited in `emit`; this keeps a failure from counting as unhandled until then
    index++;
    await emit(controller);
    pending = next;
  };

  return new TransformStream<Uint8Array, Uint8Array>({
    // Async so that a bad total errors the stream rather than throwing from the constructor.
    async start() {
      if (paddedOfCipher(cipherTotal) === null) throw integrity('its length is not one an encrypted file can have');
    },
    async transform(piece, controller) {
      received += piece.length;
      if (received > cipherTotal) throw integrity('it is longer than declared');
      let at = 0;
      if (!opener) {
        const take = Math.min(HEADER_BYTES - fill, piece.length);
        headerBytes.set(piece.subarray(0, take), fill);
        fill += take;
        at = take;
        if (fill < HEADER_BYTES) return;
        opener = await FileOpener.create(headerBytes, key, cipherTotal);
        fill = 0;
      }
      while (at < piece.length) {
        const need = opener.cipherLength(index);
        if (fill === 0 && piece.length - at >= need) {
          await submit(opener, piece.subarray(at, (at += need)) as Bytes, controller);
          continue;
        }
        gathered ??= new Uint8Array(CHUNK_BYTES + TAG_BYTES);
        const take = Math.min(need - fill, piece.length - at);
        gathered.set(piece.subarray(at, (at += take)), fill);
        if ((fill += take) === need) {
          await submit(opener, gathered.subarray(0, need), controller);
          fill = 0;
        }
      }
    },
    async flush(controller) {
      if (received < cipherTotal) throw integrity('it ended early');
      await emit(controller);
    },
  });
}

/** Decrypts a whole ciphertext held in a Blob (a download); rejects with `integrity` as `decryptStream` errors. */
export async function decryptBlob(blob: Blob, key: ContentKeySource): Promise<Blob> {
  const reader = blob.stream().pipeThrough(decryptStream(key, blob.size)).getReader();
  const parts: Uint8Array<ArrayBuffer>[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value as Uint8Array<ArrayBuffer>);
  return new Blob(parts);
}
