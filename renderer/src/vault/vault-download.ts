/**
 * Downloads and previews of files inside an encrypted folder, decrypted in this browser.
 *
 * The body is decrypted as it arrives (decryptStream holds about two 1 MiB chunks) into Blob pieces,
 * which Chromium moves to disk when they grow large, so memory stays bounded; the file is offered for
 * saving only once every chunk verified, so a tampered file saves nothing.
 */
import { fetchSigned, toApiError } from '../api/client';
import * as files from '../files/file-api';
import type { Translate } from '../i18n';
import { mimeOfName } from './media';
import type { ShownEntry } from './use-vault-folder';
import { folderRing, vaultCrypto } from './vault-store';
import type { VaultEntry } from './vault-paths';
import { vaultErrorText } from './vault-words';

/** The decrypted bytes of the row `e` (its stored path, decrypted name and ciphertext size), typed by its name; rejects with VaultError('integrity') on any tampering. */
export async function decryptedFile(folderId: number, e: VaultEntry, signal?: AbortSignal): Promise<Blob> {
  const [ring, c] = await Promise.all([folderRing(folderId), vaultCrypto()]);
  const r = await fetchSigned(files.rawUrl(e.path!, false), { signal });
  if (!r.ok || !r.body) throw await toApiError(r);
  const length = Number(r.headers.get('Content-Length'));
  const reader = r.body.pipeThrough(c.decryptStream(ring, length > 0 ? length : e.size)).getReader();
  // Each piece is copied into a Blob at once (Chromium keeps large blobs on disk), so memory stays at a few chunks.
  const parts: Blob[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(new Blob([value as Uint8Array<ArrayBuffer>]));
  }
  return new Blob(parts, { type: mimeOfName(e.name) });
}

/** Decrypts the row `e` and saves it under its decrypted name. */
export async function downloadDecrypted(folderId: number, e: VaultEntry): Promise<void> {
  const url = URL.createObjectURL(await decryptedFile(folderId, e));
  // A plain link click: the bytes are already here (a paired device's signed fetch does not apply to them).
  const a = Object.assign(document.createElement('a'), { href: url, download: e.name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Download of a row the vault shows, its failure in the reader's words (an integrity error says so, never saves bytes). */
export const downloadRow = (row: ShownEntry, t: Translate): Promise<void> =>
  downloadDecrypted(row.vault_folder, row).catch((e) => {
    throw new Error(vaultErrorText(e, t));
  });
