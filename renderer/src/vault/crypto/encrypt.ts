/**
 * Encrypting a file (docs/vault.md, "Content"). The ciphertext is never built whole: `slice(start, end)`
 * encrypts only the chunks the range touches, so an uploader asks for its parts in any size and order,
 * and a part asked for again (a resumed upload) is the same bytes. Given the header of an earlier
 * encryption of the same file, `resumeBlob` produces that encryption's bytes again (a reload mid-upload).
 */
import { type Bytes, concat, random } from './bytes';
import type { FolderKeyring } from './folder-keys';
import { chunkAad, chunkNonce, CONTENT_KEY_BYTES, newHeader, readHeader, unwrapContentKey } from './header';
import { importAesKey, seal } from './kdf';
import { CHUNK_BYTES, chunkCount, cipherSize, HEADER_BYTES, paddedSize, SIZE_PREFIX_BYTES, TAG_BYTES } from './padding';

export interface EncryptedBlob {
  /** The ciphertext's total length, `cipherSize(blob.size)`: what the upload declares. */
  size: number;
  /** This file's own key (for a link's `#k=`). */
  contentKey: Bytes;
  /** The FDV1 header (94 bytes): the content key wrapped with the folder key, the file id and nonce prefix. */
  header: Bytes;
  /** Ciphertext bytes [start, end), clamped to [0, size]; the same range always gives the same bytes. */
  slice(start: number, end: number): Promise<Bytes>;
  /** The same bytes as pieces in order, not copied into one buffer (a Blob takes them as they are). */
  pieces(start: number, end: number): Promise<Bytes[]>;
}

const STRIDE = CHUNK_BYTES + TAG_BYTES;
/**
 * Sealed chunks kept after their slice: a part boundary falls inside a chunk (parts rarely align with the
 * 94-byte header plus 1 MiB + 16 strides), and the neighbouring part, usually asked for at the same time,
 * takes the chunk from here instead of reading and sealing it again. A few, so memory stays small.
 */
const KEPT = 8;

/** Prepares `blob` for encryption with the ring's newest key: a new content key, file id and nonce prefix. */
export async function encryptBlob(blob: Blob, ring: FolderKeyring): Promise<EncryptedBlob> {
  const contentKey = random(CONTENT_KEY_BYTES);
  return sealer(blob, await newHeader(ring.newest, contentKey), contentKey);
}

/** The encryption of `blob` whose header is `header` (its content key opened with the ring): the same bytes as then. */
export async function resumeBlob(blob: Blob, ring: FolderKeyring, header: Bytes): Promise<EncryptedBlob> {
  return sealer(blob, header, await unwrapContentKey(readHeader(header), ring));
}

/** The ciphertext of `blob` under an existing header and its content key (the seal worker builds one from both). */
export async function sealer(blob: Blob, headerBytes: Bytes, contentKey: Bytes): Promise<EncryptedBlob> {
  const plainSize = blob.size;
  const padded = paddedSize(plainSize);
  const chunks = chunkCount(padded);
  const total = cipherSize(plainSize);
  const header = readHeader(headerBytes);
  const aes = await importAesKey(contentKey);
  const kept = new Map<number, Promise<Bytes>>();

  /** Ciphertext bytes [start, end) as pieces in order (views of the header and the sealed chunks, not copied). */
  async function pieces(start: number, end: number): Promise<Bytes[]> {
    start = Math.min(Math.max(0, start), total);
    end = Math.min(Math.max(start, end), total);
    const out: Bytes[] = [];
    if (start < HEADER_BYTES) out.push(headerBytes.subarray(start, Math.min(end, HEADER_BYTES)));
    if (end <= HEADER_BYTES) return out;
    const first = Math.floor((Math.max(start, HEADER_BYTES) - HEADER_BYTES) / STRIDE);
    const last = Math.floor((end - 1 - HEADER_BYTES) / STRIDE);
    // The chunks not kept from a neighbour's slice, read from the Blob in one go (one read is several times faster than one per chunk).
    const from = kept.has(first) ? first + 1 : first;
    const to = kept.has(last) && last > from ? last - 1 : last;
    const plain = from <= to ? readPlain(blob, plainSize, padded, from, to) : null;
    // Every chunk's seal is started before the first is awaited (WebCrypto may run them side by side).
    const sealed: Promise<Bytes>[] = [];
    for (let i = first; i <= last; i++) {
      let s = kept.get(i);
      if (!s) {
        s = plain!.then((p) => {
          const body = p.subarray((i - from) * CHUNK_BYTES, Math.min((i - from + 1) * CHUNK_BYTES, p.length));
          return seal(aes, chunkNonce(header, i), body, chunkAad(header, i, i === chunks - 1));
        });
        // Only the chunks at the slice's edges can be wanted by another slice.
        if (i === first || i === last) keep(kept, i, s);
      }
      sealed.push(s);
    }
    // Awaited in order below; one failing first leaves the others handled.
    for (const s of sealed) s.catch(() => {});
    for (let i = first; i <= last; i++) {
      const at = HEADER_BYTES + i * STRIDE;
      const bytes = await sealed[i - first];
      out.push(bytes.subarray(Math.max(at, start) - at, Math.min(at + bytes.length, end) - at));
    }
    return out;
  }

  async function slice(start: number, end: number): Promise<Bytes> {
    return concat(...(await pieces(start, end)));
  }

  return { size: total, contentKey, header: headerBytes, slice, pieces };
}

function keep(kept: Map<number, Promise<Bytes>>, i: number, sealed: Promise<Bytes>): void {
  kept.set(i, sealed);
  // A failed seal is not kept (the next ask tries again).
  sealed.catch(() => kept.get(i) === sealed && kept.delete(i));
  while (kept.size > KEPT) kept.delete(kept.keys().next().value!);
}

/**
 * The padded plaintext of chunks `from`..`to`, concatenated: the file's bytes with the size prefix before
 * them (chunk 0) and zeros after them (the last chunk). A range wholly inside the file is the read itself.
 */
async function readPlain(blob: Blob, plainSize: number, padded: number, from: number, to: number): Promise<Bytes> {
  const p0 = from * CHUNK_BYTES;
  const p1 = Math.min((to + 1) * CHUNK_BYTES, padded);
  const c0 = Math.max(p0, SIZE_PREFIX_BYTES);
  const c1 = Math.min(p1, SIZE_PREFIX_BYTES + plainSize);
  const content = c1 > c0 ? new Uint8Array(await blob.slice(c0 - SIZE_PREFIX_BYTES, c1 - SIZE_PREFIX_BYTES).arrayBuffer()) : null;
  if (content && c0 === p0 && c1 === p1) return content;
  const out = new Uint8Array(p1 - p0);
  if (p0 === 0) new DataView(out.buffer).setBigUint64(0, BigInt(plainSize));
  if (content) out.set(content, c0 - p0);
  return out;
}
