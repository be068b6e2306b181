/**
 * The content key of an encrypted file, for a link to it (docs/vault.md,
 * "Links"): the file's 94-byte header read with one ranged GET, opened with
 * its folder's keyring. Only this file's key goes into the link, never the
 * folder key.
 */
import { ApiError, fetchSigned, toApiError } from '../api/client';
import { rawUrl } from '../files/file-api';
import { folderOfPath, folderRing, vaultCrypto } from './vault-store';

/** The link's fragment text of the content key of the encrypted file at `path` (unlocking the vault if needed). */
export async function linkKeyOf(path: string): Promise<string> {
  const folder = await folderOfPath(path);
  if (!folder) throw new ApiError(403, { error: 'encrypted', message: '' }, null);
  const [c, ring] = await Promise.all([vaultCrypto(), folderRing(folder.id)]);
  const res = await fetchSigned(rawUrl(path, false), { headers: { Range: `bytes=0-${c.HEADER_BYTES - 1}` } });
  if (!res.ok) throw await toApiError(res);
  return c.linkFragment(await c.contentKeyOf(await head(res, c.HEADER_BYTES), ring));
}

/** The first `n` bytes of a body; a server that ignored the range is cut off there. */
export async function head(res: Response, n: number): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(new ArrayBuffer(n));
  let got = 0;
  const reader = res.body!.getReader();
  while (got < n) {
    const r = await reader.read();
    if (r.done) break;
    const take = r.value.subarray(0, n - got);
    out.set(take, got);
    got += take.length;
  }
  await reader.cancel();
  return out.subarray(0, got);
}
