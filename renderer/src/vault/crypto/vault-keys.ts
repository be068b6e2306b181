/**
 * A person's vault: an ECDH P-256 key pair whose private key (PKCS#8) is stored sealed twice, under a key
 * derived from the passphrase and under one derived from the recovery key (docs/vault.md, "Passphrase,
 * recovery key, proofs"). `auth` values prove the secret to the server, which keeps only their SHA-256.
 */
import { b64u, base32, type Bytes, concat, fromB64u, fromBase32, random, subtle, utf8 } from './bytes';
import { orFail, VaultError } from './errors';
import { argon2Master, defaultKdf, hkdfAesKey, hkdfBytes, type KdfParams, openWithNonce, sealWithNonce } from './kdf';

export interface VaultRecord {
  kdf: KdfParams;
  /** b64u of the raw uncompressed P-256 point (65 bytes). */
  public_key: string;
  wrapped_private_key: string;
  recovery_wrapped_private_key: string;
}

/** Unlocked keys: kept in memory only. The private key is extractable so the passphrase can be changed. */
export interface VaultKeys {
  userId: number;
  privateKey: CryptoKey;
  /** b64u of the raw public point, as in `VaultRecord.public_key`. */
  publicKey: string;
}

export const ECDH_P256 = { name: 'ECDH', namedCurve: 'P-256' } as const;
const privateKeyAad = (userId: number) => utf8(`filedock vault private key|${userId}`);

interface Secrets {
  kek: CryptoKey;
  auth: string;
}

async function secretsOf(master: Bytes, kekInfo: string, authInfo: string): Promise<Secrets> {
  const [kek, auth] = await Promise.all([hkdfAesKey(master, kekInfo), hkdfBytes(master, authInfo)]);
  return { kek, auth: b64u(auth) };
}

const passphraseSecrets = async (passphrase: string, kdf: KdfParams) =>
  secretsOf(await argon2Master(passphrase, kdf), 'filedock vault kek', 'filedock vault auth');
const recoverySecrets = (recovery: Bytes) => secretsOf(recovery, 'filedock vault recovery kek', 'filedock vault recovery auth');

/** The recovery key as shown once: lowercase base32 in groups of four (13 groups for 32 bytes). */
const formatRecoveryKey = (bytes: Bytes) =>
  base32(bytes)
    .match(/.{1,4}/g)!
    .join(' ');

/** Accepts what the person types: any spacing or dashes, any case. Anything but 32 bytes of base32 is `bad_recovery_key`. */
function parseRecoveryKey(text: string): Bytes {
  const bytes = fromBase32(text.replace(/[\s-]/g, '').toLowerCase());
  if (!bytes || bytes.length !== 32) throw new VaultError('bad_recovery_key');
  return bytes;
}

async function exportPkcs8(privateKey: CryptoKey): Promise<Bytes> {
  return new Uint8Array(await subtle.exportKey('pkcs8', privateKey));
}

/** Creates a vault: a new key pair, its private key sealed under the passphrase and under a new recovery key. */
export async function createVault(
  passphrase: string,
  userId: number,
  kdf: KdfParams = defaultKdf(),
): Promise<{ record: VaultRecord; auth: string; recovery_auth: string; recoveryKey: string; keys: VaultKeys }> {
  const recovery = random(32);
  const [pair, pass, rec] = await Promise.all([
    subtle.generateKey(ECDH_P256, true, ['deriveBits']),
    passphraseSecrets(passphrase, kdf),
    recoverySecrets(recovery),
  ]);
  const pkcs8 = await exportPkcs8(pair.privateKey);
  const publicKey = b64u(new Uint8Array(await subtle.exportKey('raw', pair.publicKey)));
  const aad = privateKeyAad(userId);
  const [wrapped, recoveryWrapped] = await Promise.all([sealWithNonce(pass.kek, pkcs8, aad), sealWithNonce(rec.kek, pkcs8, aad)]);
  pkcs8.fill(0);
  return {
    record: { kdf, public_key: publicKey, wrapped_private_key: b64u(wrapped), recovery_wrapped_private_key: b64u(recoveryWrapped) },
    auth: pass.auth,
    recovery_auth: rec.auth,
    recoveryKey: formatRecoveryKey(recovery),
    keys: { userId, privateKey: pair.privateKey, publicKey },
  };
}

/**
 * Opens a sealed private key. A failed tag is `code`; a record that is not even well formed, or whose
 * public key is not the private key's, is `integrity`.
 */
async function openPrivateKey(
  record: VaultRecord,
  wrapped: string,
  kek: CryptoKey,
  userId: number,
  code: 'wrong_passphrase' | 'bad_recovery_key',
): Promise<VaultKeys> {
  const bytes = fromB64u(wrapped);
  if (!bytes) throw new VaultError('integrity', 'The vault record is damaged');
  const pkcs8 = await openWithNonce(code, kek, bytes, privateKeyAad(userId));
  const { privateKey, publicKey } = await orFail('integrity', async () => {
    const privateKey = await subtle.importKey('pkcs8', pkcs8, ECDH_P256, true, ['deriveBits']);
    const jwk = await subtle.exportKey('jwk', privateKey);
    return { privateKey, publicKey: b64u(concat(Uint8Array.of(4), fromB64u(jwk.x!)!, fromB64u(jwk.y!)!)) };
  });
  pkcs8.fill(0);
  if (publicKey !== record.public_key) throw new VaultError('integrity', "The vault's public key is not its private key's");
  return { userId, privateKey, publicKey };
}

/** Unlocks with the passphrase; a wrong one is `wrong_passphrase`. `auth` proves it to the server. */
export async function unlockVault(record: VaultRecord, passphrase: string, userId: number): Promise<{ keys: VaultKeys; auth: string }> {
  const { kek, auth } = await passphraseSecrets(passphrase, record.kdf);
  return { keys: await openPrivateKey(record, record.wrapped_private_key, kek, userId, 'wrong_passphrase'), auth };
}

/** Unlocks with the recovery key (spaces and case do not matter); a malformed or wrong one is `bad_recovery_key`. */
export async function unlockWithRecovery(record: VaultRecord, recoveryKey: string, userId: number): Promise<{ keys: VaultKeys; recovery_auth: string }> {
  const { kek, auth } = await recoverySecrets(parseRecoveryKey(recoveryKey));
  return { keys: await openPrivateKey(record, record.recovery_wrapped_private_key, kek, userId, 'bad_recovery_key'), recovery_auth: auth };
}

/** Seals the unlocked private key under a new passphrase (a new salt unless `kdf` is given); the recovery copy is unchanged. */
export async function rewrapPrivateKey(
  keys: VaultKeys,
  newPassphrase: string,
  kdf: KdfParams = defaultKdf(),
): Promise<{ kdf: KdfParams; wrapped_private_key: string; auth: string }> {
  const [pass, pkcs8] = await Promise.all([passphraseSecrets(newPassphrase, kdf), exportPkcs8(keys.privateKey)]);
  const wrapped = await sealWithNonce(pass.kek, pkcs8, privateKeyAad(keys.userId));
  pkcs8.fill(0);
  return { kdf, wrapped_private_key: b64u(wrapped), auth: pass.auth };
}
