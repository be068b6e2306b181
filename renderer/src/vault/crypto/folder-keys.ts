/**
 * Folder keys (docs/vault.md, "Folder keys"): 32 random bytes per key version, wrapped for each member by
 * ECIES over P-256, and the three keys derived from each (names MAC, names encryption, content key wrap).
 */
import { b64u, type Bytes, concat, fromB64u, random, subtle, utf8 } from './bytes';
import { orFail, VaultError } from './errors';
import { hkdfAesKey, hkdfHmacKey, openWithNonce, sealWithNonce } from './kdf';
import { ECDH_P256, type VaultKeys } from './vault-keys';

/** One version of one folder's key, as the keys derived from it (none extractable). */
export interface FolderKey {
  readonly folderId: number;
  readonly version: number;
  readonly nameMac: CryptoKey;
  readonly nameEnc: CryptoKey;
  readonly contentWrap: CryptoKey;
}

const POINT_BYTES = 65;
const WRAPPED_BYTES = POINT_BYTES + 12 + 32 + 16;

/** Versions are stored as a u16 in names and a u32 in file headers: 1 to 65535. */
function checkVersion(version: number): void {
  if (!Number.isInteger(version) || version < 1 || version > 0xffff) throw new RangeError(`folder key version out of range: ${version}`);
}

const wrapInfo = (folderId: number, version: number, userId: number) => `filedock folder key|${folderId}|${version}|${userId}`;

/** A new random folder key (raw bytes, for `wrapFolderKey` and `folderKeyFrom`). */
export const newFolderKey = (): Bytes => random(32);

/** Derives a folder key's working keys from its raw bytes. */
export async function folderKeyFrom(raw: Bytes, folderId: number, version: number): Promise<FolderKey> {
  checkVersion(version);
  const [nameMac, nameEnc, contentWrap] = await Promise.all([
    hkdfHmacKey(raw, 'filedock names mac'),
    hkdfAesKey(raw, 'filedock names enc'),
    hkdfAesKey(raw, 'filedock content wrap'),
  ]);
  return { folderId, version, nameMac, nameEnc, contentWrap };
}

async function sharedSecret(privateKey: CryptoKey, publicRaw: Bytes): Promise<Bytes> {
  const publicKey = await subtle.importKey('raw', publicRaw, ECDH_P256, false, []);
  return new Uint8Array(await subtle.deriveBits({ name: 'ECDH', public: publicKey }, privateKey, 256));
}

/** Wraps a folder key for one member: `b64u(ephemeral public (65) || nonce (12) || AES-GCM(wk, key, AAD = info))`. */
export async function wrapFolderKey(folderKey: Bytes, recipientPublicKey: string, folderId: number, version: number, recipientUserId: number): Promise<string> {
  checkVersion(version);
  const recipient = fromB64u(recipientPublicKey);
  if (!recipient || recipient.length !== POINT_BYTES) throw new VaultError('wrong_key', "The member's public key is malformed");
  const ephemeral = await subtle.generateKey(ECDH_P256, true, ['deriveBits']);
  const ephemeralRaw = new Uint8Array(await subtle.exportKey('raw', ephemeral.publicKey));
  const shared = await orFail('wrong_key', () => sharedSecret(ephemeral.privateKey, recipient));
  const info = wrapInfo(folderId, version, recipientUserId);
  const wk = await hkdfAesKey(shared, info, ephemeralRaw);
  return b64u(concat(ephemeralRaw, await sealWithNonce(wk, folderKey, utf8(info))));
}

/** Unwraps a folder key wrapped for `keys`' owner; one wrapped for another folder, version or person, or damaged, is `wrong_key`. */
export async function unwrapFolderKey(wrapped: string, keys: VaultKeys, folderId: number, version: number): Promise<FolderKey> {
  checkVersion(version);
  const bytes = fromB64u(wrapped);
  if (!bytes || bytes.length !== WRAPPED_BYTES) throw new VaultError('wrong_key');
  const ephemeralRaw = bytes.subarray(0, POINT_BYTES);
  const shared = await orFail('wrong_key', () => sharedSecret(keys.privateKey, ephemeralRaw));
  const info = wrapInfo(folderId, version, keys.userId);
  const wk = await hkdfAesKey(shared, info, ephemeralRaw);
  const raw = await openWithNonce('wrong_key', wk, bytes.subarray(POINT_BYTES), utf8(info));
  const key = await folderKeyFrom(raw, folderId, version);
  raw.fill(0);
  return key;
}

/** Every version of one folder's key that the person holds; new names and files use the newest. */
export class FolderKeyring {
  readonly folderId: number;
  readonly newest: FolderKey;
  readonly #versions = new Map<number, FolderKey>();

  /** Throws `wrong_key` for no keys or a key of another folder. */
  constructor(folderId: number, keys: FolderKey[]) {
    if (!keys.length || keys.some((k) => k.folderId !== folderId)) throw new VaultError('wrong_key');
    this.folderId = folderId;
    for (const k of keys) this.#versions.set(k.version, k);
    this.newest = keys.reduce((a, b) => (b.version > a.version ? b : a));
  }

  /** The key of `version`; `wrong_key` when the person does not hold it (they joined after it, say). */
  get(version: number): FolderKey {
    const key = this.#versions.get(version);
    if (!key) throw new VaultError('wrong_key', `You do not hold version ${version} of this folder's key`);
    return key;
  }
}
