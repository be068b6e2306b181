/** Helpers for this module's tests only. */
import assert from 'node:assert/strict';
import { concat } from './bytes';
import {
  type ContentKeySource,
  decryptStream,
  defaultKdf,
  type FolderKey,
  FolderKeyring,
  folderKeyFrom,
  type KdfParams,
  newFolderKey,
  VaultError,
  type VaultErrorCode,
} from './index';

/** Argon2id at 64 KiB and one pass: the suite stays fast; one test runs the default. */
export const quickKdf = (): KdfParams => ({ ...defaultKdf(), m: 64, t: 1 });

/** A keyring for `folderId` with a fresh key for each of `versions`. */
export async function ringOf(folderId: number, versions = [1]): Promise<FolderKeyring> {
  const keys: FolderKey[] = await Promise.all(versions.map((v) => folderKeyFrom(newFolderKey(), folderId, v)));
  return new FolderKeyring(folderId, keys);
}

/** `n` bytes of a seeded xorshift32: distinct per seed, cheap for many MiB. */
export function pseudoRandom(n: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  const words = new Uint32Array(out.buffer, 0, n >> 2);
  let x = seed * 2654435761 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x;
  }
  for (let i = words.length * 4; i < n; i++) out[i] = (i * 31 + seed) & 255;
  return out;
}

export async function rejectsWith(work: Promise<unknown>, code: VaultErrorCode): Promise<void> {
  await assert.rejects(work, (e: unknown) => {
    assert.ok(e instanceof VaultError, `expected VaultError(${code}), got ${e}`);
    assert.equal(e.code, code);
    return true;
  });
}

/**
 * Pushes `cipher` through `decryptStream` in pieces of the sizes `next` gives, reading as it goes.
 * Answers what came out (even when the stream failed) and the failure.
 */
export async function decryptInPieces(
  key: ContentKeySource,
  cipher: Uint8Array,
  next: () => number,
  total = cipher.length,
): Promise<{ output: Uint8Array; pieces: number; error: unknown }> {
  const stream = decryptStream(key, total);
  const parts: Uint8Array[] = [];
  const reading = (async () => {
    const reader = stream.readable.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
  })();
  const writing = (async () => {
    const writer = stream.writable.getWriter();
    for (let at = 0; at < cipher.length; ) {
      const n = Math.max(1, next());
      await writer.write(cipher.slice(at, (at += n)));
    }
    await writer.close();
  })();
  const [w, r] = await Promise.allSettled([writing, reading]);
  const error = r.status === 'rejected' ? r.reason : w.status === 'rejected' ? w.reason : undefined;
  return { output: concat(...parts), pieces: parts.length, error };
}
