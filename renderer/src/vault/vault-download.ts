/**
 * Downloads and previews of files inside an encrypted folder, decrypted in this browser.
 *
 * Where the stream worker runs (vault-stream.ts), a download and a media preview are decrypted there as
 * they pass: the page reads the file's header, opens its content key and hands the worker that key
 * alone. Elsewhere (and for the other previews) the body is decrypted in the page as it arrives
 * (decryptStream holds about two 1 MiB chunks) into Blob pieces, which Chromium moves to disk when they
 * grow large; the file is offered only once every chunk verified, so a tampered file saves nothing.
 */
import { fetchSigned, toApiError } from '../api/client';
import { authHeaders } from '../device/device-key';
import * as files from '../files/file-api';
import type { Translate } from '../i18n';
import { mimeOfName } from './media';
import type { ShownEntry } from './use-vault-folder';
import { folderRing, vaultCrypto } from './vault-store';
import type { VaultEntry } from './vault-paths';
import { vaultErrorText } from './vault-words';
import { head } from './link-key';
import { canStream, StreamUnavailable, streamDownload, streamMedia } from './vault-stream';
import type { StreamSource } from '../vault-sw/protocol';
import { withBase } from '../lib/base';

/** The decrypted bytes of the row `e` (its stored path, decrypted name and ciphertext size), typed by its name; rejects with VaultError('integrity') on any tampering. */
export async function decryptedFile(folderId: number, e: VaultEntry, signal?: AbortSignal): Promise<Blob> {
  const [ring, c] = await Promise.all([folderRing(folderId), vaultCrypto()]);
  const r = await fetchSigned(files.rawUrl(e.path!, false), { signal });
  if (!r.ok || !r.body) throw await toApiError(r);
  const length = Number(r.headers.get('Content-Length'));
  const reader = r.body.pipeThrough(c.decryptStream(ring, length > 0 ? length : (e.cipher_size ?? e.size))).getReader();
  // Each piece is copied into a Blob at once (Chromium keeps large blobs on disk), so memory stays at a few chunks.
  const parts: Blob[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(new Blob([value as Uint8Array<ArrayBuffer>]));
  }
  return new Blob(parts, { type: mimeOfName(e.name) });
}

/** What the stream worker needs for the row `e`: its raw address and its content key, read from its header. */
async function streamSource(folderId: number, e: VaultEntry): Promise<Omit<StreamSource, 'mode'>> {
  const [ring, c] = await Promise.all([folderRing(folderId), vaultCrypto()]);
  const url = files.rawUrl(e.path!, false);
  const res = await fetchSigned(url, { headers: { Range: `bytes=0-${c.HEADER_BYTES - 1}` } });
  if (!res.ok) throw await toApiError(res);
  const total = Number(res.headers.get('Content-Range')?.split('/')[1]);
  const key = await c.contentKeyOf(await head(res, c.HEADER_BYTES), ring);
  return {
    url: withBase(url),
    headers: authHeaders(),
    credentials: 'same-origin',
    cipherTotal: total > 0 ? total : (e.cipher_size ?? e.size),
    contentKey: key.slice().buffer,
    name: e.name,
    type: mimeOfName(e.name),
  };
}

/** A player page for an encrypted video or audio row, decrypted by ranges as it plays; null where the worker cannot run. */
export async function mediaFrame(folderId: number, e: VaultEntry): Promise<{ url: string; close(): void } | null> {
  if (!canStream()) return null;
  return streamMedia(await streamSource(folderId, e)).catch((err) => {
    if (err instanceof StreamUnavailable) return null;
    throw err;
  });
}

/** Decrypts the row `e` and saves it under its decrypted name: through the stream worker, else from a Blob. */
export async function downloadDecrypted(folderId: number, e: VaultEntry): Promise<void> {
  if (canStream())
    try {
      return await streamDownload(await streamSource(folderId, e));
    } catch (err) {
      if (!(err instanceof StreamUnavailable)) throw err;
    }
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
