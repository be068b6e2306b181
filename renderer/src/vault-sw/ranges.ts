/**
 * Where a plaintext byte range of an encrypted file lies in its ciphertext (docs/vault.md, "Content"):
 * the padded stream is the true size (u64) then the content, cut into 1 MiB chunks, each sealed with a
 * 16-byte tag after the 94-byte header. Pure arithmetic, shared by the stream worker and its tests.
 */
import { CHUNK_BYTES, HEADER_BYTES, SIZE_PREFIX_BYTES, TAG_BYTES } from '../vault/crypto/padding';

/** Where sealed chunk `i` starts in the ciphertext. */
export const chunkOffset = (i: number): number => HEADER_BYTES + i * (CHUNK_BYTES + TAG_BYTES);

/** The chunk holding plaintext byte `p` of the file. */
export const chunkOf = (p: number): number => Math.floor((p + SIZE_PREFIX_BYTES) / CHUNK_BYTES);

/** Plaintext bytes [from, to] (inclusive) of the file that chunk `i`'s padded plaintext holds, as offsets into it. */
export function sliceOfChunk(i: number, from: number, to: number): { start: number; end: number } {
  const base = i * CHUNK_BYTES - SIZE_PREFIX_BYTES; // file offset of the chunk's first byte
  return { start: Math.max(from - base, 0), end: Math.min(to - base + 1, CHUNK_BYTES) };
}

/** An inclusive byte range. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * A `Range` header against a file of `size` bytes: null for none (the whole file), 'unsatisfiable' for a
 * range that lies outside it. Only single ranges are taken; a multi-range header is answered whole.
 */
export function parseRange(header: string | null, size: number): ByteRange | null | 'unsatisfiable' {
  const m = header?.trim().match(/^bytes=(\d*)-(\d*)$/);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(size - n, 0), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
