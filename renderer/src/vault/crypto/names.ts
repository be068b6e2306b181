/**
 * Encrypted names (docs/vault.md, "Names"): deterministic per folder key version, with a synthetic IV as
 * in AES-SIV, stored as lowercase base32 of `version (u16) || iv (12) || ct+tag`.
 */
import { base32, concat, fromBase32, subtle, uint, utf8 } from './bytes';
import { VaultError } from './errors';
import { open, seal } from './kdf';
import type { FolderKey, FolderKeyring } from './folder-keys';

/** 129 bytes of UTF-8 give 2 + 12 + 129 + 16 = 159 bytes, 255 base32 characters: the longest segment storages take. */
const MAX_NAME_BYTES = 129;
const ENCRYPTED_NAME = /^[a-z2-7]{32,255}$/;

const nameAad = (folderId: number) => utf8(`filedock name|${folderId}`);

async function syntheticIv(key: FolderKey, plain: Uint8Array<ArrayBuffer>) {
  return new Uint8Array(await subtle.sign('HMAC', key.nameMac, plain)).subarray(0, 12);
}

/** Encrypts a name (NFC first) with the ring's newest key; longer than 129 bytes of UTF-8 is `name_too_long`. Same name, same key: same result. */
export async function encryptName(ring: FolderKeyring, name: string): Promise<string> {
  const plain = utf8(name.normalize('NFC'));
  if (plain.length > MAX_NAME_BYTES) throw new VaultError('name_too_long');
  const key = ring.newest;
  const iv = await syntheticIv(key, plain);
  return base32(concat(uint(key.version, 2), iv, await seal(key.nameEnc, iv, plain, nameAad(ring.folderId))));
}

/** Decrypts a stored name: not of the encrypted shape is `not_encrypted`, a version the ring lacks `wrong_key`, anything that does not verify `integrity`. */
export async function decryptName(ring: FolderKeyring, stored: string): Promise<string> {
  const bytes = isEncryptedName(stored) ? fromBase32(stored) : null;
  if (!bytes) throw new VaultError('not_encrypted', 'This name is not encrypted');
  if (bytes.length < 2 + 12 + 16) throw new VaultError('integrity');
  const key = ring.get(new DataView(bytes.buffer).getUint16(0));
  const iv = bytes.subarray(2, 14);
  const plain = await open('integrity', key.nameEnc, iv, bytes.subarray(14), nameAad(ring.folderId));
  // The IV must be the name's own MAC: one name has exactly one encryption, which the server's conflict checks rely on.
  const expected = await syntheticIv(key, plain);
  if (expected.some((b, i) => b !== iv[i])) throw new VaultError('integrity');
  return new TextDecoder('utf-8', { fatal: true }).decode(plain);
}

/** True for a name of the encrypted shape (32 to 255 characters of `[a-z2-7]`), as the server checks it. */
export const isEncryptedName = (name: string): boolean => ENCRYPTED_NAME.test(name);
