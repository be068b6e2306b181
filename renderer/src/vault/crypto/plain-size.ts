/**
 * An encrypted file's true size from its first 102 bytes (docs/vault.md, "Content"): the header's content
 * key, opened with the folder's keyring (authenticated), then the 8-byte size prefix at the front of chunk 0
 * decrypted as AES-GCM encrypts it, with AES-CTR from counter block nonce || 2. The prefix itself is not
 * authenticated here (its tag closes the whole 1 MiB chunk); it must lie in the bucket the ciphertext's
 * length implies, so a changed one can mislead the size column only within that bucket (the server knows
 * the bucket anyway), and a download still verifies every chunk.
 */
import { type Bytes, concat, subtle, uint } from './bytes';
import { VaultError } from './errors';
import type { FolderKeyring } from './folder-keys';
import { chunkNonce, readHeader, unwrapContentKey } from './header';
import { HEADER_BYTES, paddedOfCipher, paddedSize, SIZE_PREFIX_BYTES } from './padding';

/** How many bytes from the start of an encrypted file `plainSizeOf` needs. */
export const SIZE_HEAD_BYTES = HEADER_BYTES + SIZE_PREFIX_BYTES;

/** The plaintext size of the encrypted file of `total` bytes whose first SIZE_HEAD_BYTES are `head`; `integrity` when they do not fit. */
export async function plainSizeOf(head: Bytes, total: number, ring: FolderKeyring): Promise<number> {
  const padded = paddedOfCipher(total);
  if (padded === null || head.length < SIZE_HEAD_BYTES) throw new VaultError('integrity');
  const header = readHeader(head.subarray(0, HEADER_BYTES));
  const raw = await unwrapContentKey(header, ring);
  const key = await subtle.importKey('raw', raw, 'AES-CTR', false, ['decrypt']);
  // GCM's first keystream block for a 12-byte nonce is E(nonce || 2) (block 1 is the tag's mask).
  const counter = concat(chunkNonce(header, 0), uint(2, 4));
  const prefix = new Uint8Array(await subtle.decrypt({ name: 'AES-CTR', counter, length: 32 }, key, head.slice(HEADER_BYTES, SIZE_HEAD_BYTES)));
  const size = Number(new DataView(prefix.buffer).getBigUint64(0));
  if (!Number.isSafeInteger(size) || paddedSize(size) !== padded) throw new VaultError('integrity');
  return size;
}
