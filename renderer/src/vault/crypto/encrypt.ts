/**
 * Encrypting a file (docs/vault.md, "Content"). The ciphertext is never built whole: `slice(start, end)`
 * encrypts only the chunks the range touches, so an uploader asks for its parts in any size and order,
 * and a part asked for again (a resumed upload) is the same bytes.
 */
import { type Bytes, random } from './bytes';
import type { FolderKeyring } from './folder-keys';
import { chunkAad, chunkNonce, CONTENT_KEY_BYTES, newHeader, readHeader } from './header';
import { importAesKey, seal } from './kdf';
import { CHUNK_BYTES, chunkCount, cipherSize, HEADER_BYTES, paddedSize, SIZE_PREFIX_BYTES, TAG_BYTES } from './padding';

export interface EncryptedBlob {
  /** The ciphertext's total length, `cipherSize(blob.size)`: what the upload declares. */
  size: number;
  /** This file's own key (for a link's `#k=`). */
  contentKey: Bytes;
  /** Ciphertext bytes [start, end), clamped to [0, size]; the same range always gives the same bytes. */
  slice(start: number, end: number): Promise<Bytes>;
}

/** Chunks read and sealed at once inside one slice: enough to keep reads and WebCrypto's threads busy, few enough to bound memory. */
const PARALLEL = 4;
const STRIDE = CHUNK_BYTES + TAG_BYTES;

/** Prepares `blob` for encryption with the ring's newest key: a new content key, file id and nonce prefix. */
export async function encryptBlob(blob: Blob, ring: FolderKeyring): Promise<EncryptedBlob> {
  const plainSize = blob.size;
  const padded = paddedSize(plainSize);
  const chunks = chunkCount(padded);
  const total = cipherSize(plainSize);
  const contentKey = random(CONTENT_KEY_BYTES);
  const headerBytes = await newHeader(ring.newest, contentKey);
  const header = readHeader(headerBytes);
  const aes = await importAesKey(contentKey);

  /**
   * The padded plaintext of chunk `i`, read from the Blob. A chunk wholly inside the file's bytes is
   * the read itself (no copy); the first (size prefix) and the last (zero padding) are built around it.
   */
  async function plainChunk(i: number): Promise<Bytes> {
    const p0 = i * CHUNK_BYTES;
    const p1 = Math.min(p0 + CHUNK_BYTES, padded);
    const c0 = Math.max(p0, SIZE_PREFIX_BYTES);
    const c1 = Math.min(p1, SIZE_PREFIX_BYTES + plainSize);
    const content = c1 > c0 ? new Uint8Array(await blob.slice(c0 - SIZE_PREFIX_BYTES, c1 - SIZE_PREFIX_BYTES).arrayBuffer()) : null;
    if (content && c0 === p0 && c1 === p1) return content;
    const out = new Uint8Array(p1 - p0);
    if (p0 === 0) new DataView(out.buffer).setBigUint64(0, BigInt(plainSize));
    if (content) out.set(content, c0 - p0);
    return out;
  }

  async function slice(start: number, end: number): Promise<Bytes> {
    start = Math.min(Math.max(0, start), total);
    end = Math.min(Math.max(start, end), total);
    const out = new Uint8Array(end - start);
    if (start < HEADER_BYTES) out.set(headerBytes.subarray(start, Math.min(end, HEADER_BYTES)));
    if (end <= HEADER_BYTES) return out;
    const last = Math.floor((end - 1 - HEADER_BYTES) / STRIDE);
    let next = Math.floor((Math.max(start, HEADER_BYTES) - HEADER_BYTES) / STRIDE);
    // A few chunks in flight, each read then sealed: reading one overlaps sealing another.
    const worker = async () => {
      for (let i = next++; i <= last; i = next++) {
        const sealed = await seal(aes, chunkNonce(header, i), await plainChunk(i), chunkAad(header, i, i === chunks - 1));
        const at = HEADER_BYTES + i * STRIDE;
        const a = Math.max(at, start);
        const b = Math.min(at + sealed.length, end);
        out.set(sealed.subarray(a - at, b - at), a - start);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    return out;
  }

  return { size: total, contentKey, slice };
}
