/** Sizes of encrypted files (docs/vault.md, "Content"): the padded plaintext stream and the ciphertext. */

export const HEADER_BYTES = 94;
export const CHUNK_LOG2 = 20;
export const CHUNK_BYTES = 2 ** CHUNK_LOG2;
export const TAG_BYTES = 16;
/** The true size (u64) at the front of the padded stream. */
export const SIZE_PREFIX_BYTES = 8;
const MIN_PADDED = 4096;

/** Padmé: round `n` up so that only the top floor(log2(floor(log2 n))) + 1 bits of it vary. Arithmetic, not bitwise: sizes pass 2^32. */
function padme(n: number): number {
  let e = Math.floor(Math.log2(n));
  if (2 ** e > n) e--; // log2 may round up just below a power of two
  const s = Math.floor(Math.log2(e)) + 1;
  const unit = 2 ** (e - s);
  return Math.ceil(n / unit) * unit;
}

const bucket = (n: number) => (n <= MIN_PADDED ? MIN_PADDED : padme(n));

/** The padded plaintext stream's length for a file of `size` bytes: bucket(size + 8). */
export const paddedSize = (size: number): number => bucket(size + SIZE_PREFIX_BYTES);

/** The number of chunks of a padded stream. */
export const chunkCount = (padded: number): number => Math.ceil(padded / CHUNK_BYTES);

/** The ciphertext's total length for a file of `size` bytes: header, padded stream, one tag per chunk. */
export function cipherSize(size: number): number {
  const padded = paddedSize(size);
  return HEADER_BYTES + padded + chunkCount(padded) * TAG_BYTES;
}

/** The padded stream's length behind a ciphertext of `total` bytes, or null when no file encrypts to that length. */
export function paddedOfCipher(total: number): number | null {
  if (!Number.isSafeInteger(total) || total < HEADER_BYTES + MIN_PADDED + TAG_BYTES) return null;
  const body = total - HEADER_BYTES;
  const padded = body - Math.ceil(body / (CHUNK_BYTES + TAG_BYTES)) * TAG_BYTES;
  return paddedSize(padded - SIZE_PREFIX_BYTES) === padded && cipherSize(padded - SIZE_PREFIX_BYTES) === total ? padded : null;
}
