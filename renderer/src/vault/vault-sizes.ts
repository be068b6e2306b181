/**
 * The true sizes of encrypted files for the listing (docs/vault.md, "Sizes"): the server knows only the
 * padded ciphertext's length, so each file's first 102 bytes are read with one ranged GET and its size
 * decrypted here (crypto/plain-size.ts). A few at a time, never holding the list back (a row shows its
 * stored size until its own is known), and kept per path and date until the vault locks.
 */
import { fetchSigned, toApiError } from '../api/client';
import { rawUrl } from '../files/file-api';
import { head } from './link-key';
import { folderRing, onLock, vaultCrypto } from './vault-store';

const AT_ONCE = 4;
const known = new Map<string, Promise<number | null>>();
const waiting: Array<() => void> = [];
let running = 0;

onLock(() => known.clear());

async function turn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((go) => waiting.push(go));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** The plaintext size of the encrypted file at the stored `path` (of `total` ciphertext bytes, changed at `modified`); null when it cannot be read. */
export function plainSize(folderId: number, path: string, total: number, modified: string): Promise<number | null> {
  const id = `${path}|${modified}|${total}`;
  let p = known.get(id);
  if (!p) {
    p = turn(async () => {
      const [c, ring] = await Promise.all([vaultCrypto(), folderRing(folderId)]);
      const res = await fetchSigned(rawUrl(path, false), { headers: { Range: `bytes=0-${c.SIZE_HEAD_BYTES - 1}` } });
      if (!res.ok) throw await toApiError(res);
      return c.plainSizeOf(await head(res, c.SIZE_HEAD_BYTES), total, ring);
    }).catch(() => null);
    known.set(id, p);
  }
  return p;
}
