/** Argon2id for passphrases, HKDF-SHA256 for every key derived from a secret, and AES-256-GCM sealing. */
import { argon2id } from 'hash-wasm';
import { b64u, type Bytes, fromB64u, random, subtle, utf8 } from './bytes';
import { orFail, VaultError, type VaultErrorCode } from './errors';

export interface KdfParams {
  alg: 'argon2id';
  /** Memory in KiB. */
  m: number;
  t: number;
  p: number;
  /** b64u of the salt (16 random bytes when made here). */
  salt: string;
}

/** The parameters for a new vault or a new passphrase: 64 MiB, 3 passes, one lane, a fresh salt. */
export const defaultKdf = (): KdfParams => ({ alg: 'argon2id', m: 65536, t: 3, p: 1, salt: b64u(random(16)) });

const within = (n: unknown, lo: number, hi: number): n is number => Number.isInteger(n) && (n as number) >= lo && (n as number) <= hi;

/** `master = Argon2id(NFC(passphrase), salt, m, t, p)`, 32 bytes; parameters outside sane bounds are `integrity` (a damaged record). */
export async function argon2Master(passphrase: string, kdf: KdfParams): Promise<Bytes> {
  const salt = fromB64u(kdf.salt);
  if (kdf.alg !== 'argon2id' || !within(kdf.p, 1, 16) || !within(kdf.t, 1, 64) || !within(kdf.m, 8 * kdf.p, 4 * 1024 * 1024) || !salt || salt.length < 8) {
    throw new VaultError('integrity', 'The vault key parameters are damaged');
  }
  // hash-wasm refuses an empty password; no vault has one, so it cannot be right.
  if (!passphrase) throw new VaultError('wrong_passphrase', 'The passphrase is empty');
  const hash = await argon2id({
    password: utf8(passphrase.normalize('NFC')),
    salt,
    memorySize: kdf.m,
    iterations: kdf.t,
    parallelism: kdf.p,
    hashLength: 32,
    outputType: 'binary',
  });
  return new Uint8Array(hash);
}

async function hkdfBase(secret: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return subtle.importKey('raw', secret, 'HKDF', false, ['deriveKey', 'deriveBits']);
}

const hkdf = (salt: Uint8Array<ArrayBuffer>, info: string): HkdfParams => ({ name: 'HKDF', hash: 'SHA-256', salt, info: utf8(info) });
const NO_SALT = new Uint8Array(0);

/** 32 bytes of HKDF-SHA256 output. */
export async function hkdfBytes(secret: Bytes, info: string, salt: Bytes = NO_SALT): Promise<Bytes> {
  return new Uint8Array(await subtle.deriveBits(hkdf(salt, info), await hkdfBase(secret), 256));
}

/** An AES-256-GCM key from the first 32 bytes of HKDF-SHA256 output (non-extractable). */
export async function hkdfAesKey(secret: Bytes, info: string, salt: Bytes = NO_SALT): Promise<CryptoKey> {
  return subtle.deriveKey(hkdf(salt, info), await hkdfBase(secret), { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
}

/** An HMAC-SHA256 key from the first 32 bytes of HKDF-SHA256 output (non-extractable). */
export async function hkdfHmacKey(secret: Bytes, info: string): Promise<CryptoKey> {
  return subtle.deriveKey(hkdf(NO_SALT, info), await hkdfBase(secret), { name: 'HMAC', hash: 'SHA-256', length: 256 }, false, ['sign']);
}

export const importAesKey = (raw: Bytes): Promise<CryptoKey> => subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);

/** AES-GCM ciphertext || tag. */
export async function seal(key: CryptoKey, nonce: Bytes, plain: Bytes, aad: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: aad }, key, plain));
}

/** Opens what `seal` made; a failed tag is `VaultError(code)`. Calls WebCrypto before its first await, so `sealed` is copied at once. */
export function open(code: VaultErrorCode, key: CryptoKey, nonce: Bytes, sealed: Bytes, aad: Bytes): Promise<Bytes> {
  const plain = subtle.decrypt({ name: 'AES-GCM', iv: nonce, additionalData: aad }, key, sealed);
  return orFail(code, async () => new Uint8Array(await plain));
}

/** `nonce(12) || seal(...)` with a fresh random nonce. */
export async function sealWithNonce(key: CryptoKey, plain: Bytes, aad: Bytes): Promise<Bytes> {
  const nonce = random(12);
  const sealed = await seal(key, nonce, plain, aad);
  const out = new Uint8Array(12 + sealed.length);
  out.set(nonce), out.set(sealed, 12);
  return out;
}

/** Opens `nonce(12) || sealed`; too short or a failed tag is `VaultError(code)`. */
export function openWithNonce(code: VaultErrorCode, key: CryptoKey, bytes: Bytes, aad: Bytes): Promise<Bytes> {
  if (bytes.length < 12 + 16) return Promise.reject(new VaultError(code));
  return open(code, key, bytes.subarray(0, 12), bytes.subarray(12), aad);
}
