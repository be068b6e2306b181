/**
 * File work inside an encrypted folder, all in this browser: names encrypted
 * before they are sent, uploads through the ordinary upload queue with the
 * ciphertext as their byte source (resumed after a reload from the header kept
 * with the pending record), downloads and previews decrypted from the
 * raw route's stream, thumbnails drawn here and stored encrypted.
 * Downloads and previews are in vault-download.ts.
 */
import { fetchSigned } from '../api/client';
import { joinPath } from '../lib/ui-path';
import * as files from '../files/file-api';
import { uploads } from '../upload/uploads';
import type { Picked } from '../upload/drop';
import type { VaultPending } from '../upload/upload-queue';
import type { FolderKeyring } from './crypto';
import { putThumb, thumbUrl } from './vault-api';
import { folderRing, vaultCrypto } from './vault-store';
import { segments, takenBy, type VaultEntry } from './vault-paths';
import { mimeOfName, thumbSize } from './media';
import { sealedParts } from './seal-pool';

const THUMB_PX = 256;

/** Thrown when a name is already taken by a decrypted row (the server cannot see that across key versions). */
export class NameTaken extends Error {
  constructor(readonly taken: string) {
    super(taken);
    this.name = 'NameTaken';
  }
}

const encryptName = async (ring: FolderKeyring, name: string) => (await vaultCrypto()).encryptName(ring, name);

/** A new subfolder of an encrypted folder, under its encrypted name; answers the stored name. */
export async function mkdirEncrypted(folderId: number, dir: string, name: string, shown: readonly VaultEntry[]): Promise<string> {
  if (takenBy(shown, name)) throw new NameTaken(name);
  const stored = await encryptName(await folderRing(folderId), name);
  await files.mkdir(dir, stored);
  return stored;
}

/** Renames an encrypted row: the new name is encrypted with the newest key; answers the stored name. */
export async function renameEncrypted(folderId: number, path: string, name: string, shown: readonly VaultEntry[]): Promise<string> {
  const other = takenBy(shown, name);
  if (other && other.path !== path) throw new NameTaken(name);
  const stored = await encryptName(await folderRing(folderId), name);
  await files.rename(path, stored);
  return stored;
}

/**
 * Queues a picked set (files and dropped folders) into the encrypted folder `dir`. Every path segment is
 * encrypted; a first-level name that is already there keeps its stored name (it may be under an older key),
 * so a file uploaded again replaces the one people see, as in a plain folder, instead of standing beside it.
 */
export async function uploadEncrypted(folderId: number, dir: string, picked: Picked, shown: readonly VaultEntry[]): Promise<void> {
  const ring = await folderRing(folderId);
  const c = await vaultCrypto();
  const known = new Map<string, string>();
  const storedOf = async (rel: string): Promise<string> => {
    const out: string[] = [];
    for (const [i, seg] of segments(rel).entries()) {
      const existing = i === 0 ? takenBy(shown, seg) : undefined;
      out.push(existing?.cipher_name ?? (await c.encryptName(ring, seg)));
    }
    return out.join('/');
  };
  for (const d of picked.dirs) {
    const stored = await storedOf(d);
    known.set(d, stored);
    if (takenBy(shown, d) && !d.includes('/')) continue;
    try {
      await files.mkdir(dir, stored);
    } catch (e) {
      if ((e as { code?: string }).code !== 'name_taken' && (e as { code?: string }).code !== 'conflict') throw e;
    }
  }
  for (const f of picked.files) {
    const stored = await storedOf(f.rel);
    const enc = await c.encryptBlob(f.file, ring);
    const parts = sealedParts(f.file, enc);
    const vault = { folder_id: folderId, header: c.b64u(enc.header) };
    const key = uploads.add(dir, f.file, stored, { size: enc.size, label: f.rel, slice: parts.slice, vault });
    afterUpload(key, parts, joinPath(dir, stored), f.file, f.rel, ring);
  }
}

/** The picked file is not the one the restored upload was started with: refused before anything is sent. */
export class NotThatFile extends Error {
  constructor() {
    super('not the file this upload was started with');
    this.name = 'NotThatFile';
  }
}

/**
 * Continues an encrypted upload restored after a reload with the file picked again. The folder's keys
 * (the unlock dialog first, when locked) must decrypt the stored name to the picked file's name, and the
 * file's ciphertext size must be the one the session declared; then `resumeBlob` makes the same
 * ciphertext again from the kept header, so the parts the server holds stay valid and only the
 * missing ones are sent, sealed in the workers as for a new upload.
 */
export async function resumeEncrypted(key: string, pending: VaultPending, path: string, file: File): Promise<void> {
  const [ring, c] = await Promise.all([folderRing(pending.folder_id), vaultCrypto()]);
  const name = await c.decryptName(ring, path.slice(path.lastIndexOf('/') + 1));
  const size = uploads.list().find((u) => u.key === key)?.size;
  if (name !== file.name.normalize('NFC') || c.cipherSize(file.size) !== size) throw new NotThatFile();
  const enc = await c.resumeBlob(file, ring, c.fromB64u(pending.header) ?? new Uint8Array());
  const parts = sealedParts(file, enc);
  if (!uploads.attach(key, file, { size: enc.size, label: name, slice: parts.slice, vault: pending })) {
    parts.close();
    throw new NotThatFile();
  }
  afterUpload(key, parts, path, file, name, ring);
}

/** Once the upload `key` is over: its workers forget the file, and a finished image gets its thumbnail. */
function afterUpload(key: string, parts: { close(): void }, path: string, file: Blob, name: string, ring: FolderKeyring): void {
  whenOver(key, (state) => {
    parts.close();
    if (state === 'done' && mimeOfName(name).startsWith('image/')) thumbAfterUpload(path, file, ring);
  });
}

/** Calls `fn` once the upload `key` is done or cancelled (an upload that failed may still be resumed). */
function whenOver(key: string, fn: (state: 'done' | 'cancelled') => void): void {
  const off = uploads.subscribe(() => {
    const state = uploads.list().find((u) => u.key === key)?.state;
    if (state !== 'done' && state !== 'cancelled') return;
    off();
    fn(state);
  });
}

/** Draws an uploaded image's thumbnail, encrypts it and stores it (best effort: a file without one shows its type icon). */
function thumbAfterUpload(path: string, image: Blob, ring: FolderKeyring): void {
  void makeThumb(image, ring)
    .then((bytes) => bytes && putThumb(path, bytes).then(() => forgetThumb(path)))
    .catch(() => {});
}

/** A 256 px WebP of `image`, encrypted as its own small FDV1 file; null where the browser cannot draw it. */
async function makeThumb(image: Blob, ring: FolderKeyring): Promise<Uint8Array | null> {
  if (typeof OffscreenCanvas === 'undefined' || typeof createImageBitmap === 'undefined') return null;
  const bmp = await createImageBitmap(image);
  const { w, h } = thumbSize(bmp.width, bmp.height, THUMB_PX);
  const canvas = new OffscreenCanvas(w, h);
  canvas.getContext('2d')!.drawImage(bmp, 0, 0, w, h);
  bmp.close();
  const webp = await canvas.convertToBlob({ type: 'image/webp', quality: 0.8 });
  const enc = await (await vaultCrypto()).encryptBlob(webp, ring);
  return enc.slice(0, enc.size);
}

const thumbs = new Map<string, Promise<string | null>>();

/** A blob URL of the decrypted thumbnail of `path`, or null when it has none (asked once per path and date). */
export function vaultThumb(folderId: number, e: VaultEntry): Promise<string | null> {
  const id = `${e.path}|${e.modified}`;
  let p = thumbs.get(id);
  if (!p) {
    p = (async () => {
      const r = await fetchSigned(thumbUrl(e.path!));
      if (!r.ok) return null;
      const c = await vaultCrypto();
      const plain = await c.decryptBlob(await r.blob(), await folderRing(folderId));
      return URL.createObjectURL(new Blob([plain], { type: 'image/webp' }));
    })().catch(() => null);
    thumbs.set(id, p);
  }
  return p;
}

/** Told when a thumbnail was stored, so a listing that asked before it existed asks again. */
export const thumbStored = new EventTarget();

function forgetThumb(path: string): void {
  for (const id of thumbs.keys()) if (id.startsWith(`${path}|`)) thumbs.delete(id);
  thumbStored.dispatchEvent(new Event('stored'));
}

/** Forgets every decrypted thumbnail (on lock). */
export function dropThumbs(): void {
  for (const p of thumbs.values()) void p.then((u) => u && URL.revokeObjectURL(u));
  thumbs.clear();
}
