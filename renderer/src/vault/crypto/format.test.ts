/**
 * The format, checked against docs/vault.md by a second reading of it written here with raw WebCrypto and
 * hash-wasm only: every info, AAD, nonce and byte offset the server, the UI and future readers rely on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argon2id } from 'hash-wasm';
import { createVault, decryptName, encryptBlob, encryptName, FolderKeyring, folderKeyFrom, newFolderKey, paddedSize, wrapFolderKey } from './index';
import { b64u, base32, concat, fromB64u, fromBase32 } from './bytes';
import { pseudoRandom, quickKdf, rejectsWith } from './testing';

const s = crypto.subtle;
const text = (t: string) => new TextEncoder().encode(t);
const u32 = (n: number) => new Uint8Array([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

async function hkdf(ikm: Uint8Array<ArrayBuffer>, info: string, salt = new Uint8Array(0)) {
  const base = await s.importKey('raw', ikm, 'HKDF', false, ['deriveBits']);
  return new Uint8Array(await s.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info: text(info) }, base, 256));
}
const aes = (raw: Uint8Array<ArrayBuffer>) => s.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
async function gcmOpen(raw: Uint8Array<ArrayBuffer>, iv: Uint8Array<ArrayBuffer>, sealed: Uint8Array<ArrayBuffer>, aad: Uint8Array<ArrayBuffer>) {
  return new Uint8Array(await s.decrypt({ name: 'AES-GCM', iv, additionalData: aad }, await aes(raw), sealed));
}

test('vault record: Argon2id → HKDF kek/auth, the private key sealed with its user id; the recovery key the same way', async () => {
  const passphrase = 'Şifre e\u0301'; // NFC folds e + combining acute into é
  const made = await createVault(passphrase, 77, quickKdf());
  const { kdf } = made.record;
  const master = await argon2id({
    password: text(passphrase.normalize('NFC')),
    salt: fromB64u(kdf.salt)!,
    memorySize: kdf.m,
    iterations: kdf.t,
    parallelism: kdf.p,
    hashLength: 32,
    outputType: 'binary',
  });
  const m = new Uint8Array(master);
  assert.equal(b64u(await hkdf(m, 'filedock vault auth')), made.auth);
  const wrapped = fromB64u(made.record.wrapped_private_key)!;
  const pkcs8 = await gcmOpen(await hkdf(m, 'filedock vault kek'), wrapped.slice(0, 12), wrapped.slice(12), text('filedock vault private key|77'));
  const jwk = await s.exportKey('jwk', await s.importKey('pkcs8', pkcs8, { name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']));
  assert.equal(b64u(concat(new Uint8Array([4]), fromB64u(jwk.x!)!, fromB64u(jwk.y!)!)), made.record.public_key);

  const recovery = fromBase32(made.recoveryKey.replace(/ /g, ''))!;
  assert.equal(recovery.length, 32);
  assert.equal(b64u(await hkdf(recovery, 'filedock vault recovery auth')), made.recovery_auth);
  const rw = fromB64u(made.record.recovery_wrapped_private_key)!;
  const pkcs8b = await gcmOpen(await hkdf(recovery, 'filedock vault recovery kek'), rw.slice(0, 12), rw.slice(12), text('filedock vault private key|77'));
  assert.deepEqual(pkcs8b, pkcs8);
});

test('folder key wrap: ECDH with an ephemeral key, HKDF salted with its raw point, the info as AAD', async () => {
  const member = await createVault('m', 12, quickKdf());
  const raw = newFolderKey();
  const wrapped = fromB64u(await wrapFolderKey(raw, member.record.public_key, 34, 2, 12))!;
  const ephemeral = wrapped.slice(0, 65);
  const info = 'filedock folder key|34|2|12';
  const publicKey = await s.importKey('raw', ephemeral, { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  const shared = new Uint8Array(await s.deriveBits({ name: 'ECDH', public: publicKey }, member.keys.privateKey, 256));
  const wk = await hkdf(shared, info, ephemeral);
  assert.deepEqual(await gcmOpen(wk, wrapped.slice(65, 77), wrapped.slice(77), text(info)), raw);
});

test('names: iv = HMAC(name_mac, NFC(name))[0..12], AES-GCM under name_enc with the folder id, base32 of version || iv || ct', async () => {
  const raw = newFolderKey();
  const ring = new FolderKeyring(56, [await folderKeyFrom(raw, 56, 513)]);
  const name = 'Ünlü.txt'.normalize('NFD');
  const plain = text(name.normalize('NFC'));
  const mac = await s.importKey('raw', await hkdf(raw, 'filedock names mac'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const iv = new Uint8Array(await s.sign('HMAC', mac, plain)).slice(0, 12);
  const ct = new Uint8Array(
    await s.encrypt({ name: 'AES-GCM', iv, additionalData: text('filedock name|56') }, await aes(await hkdf(raw, 'filedock names enc')), plain),
  );
  assert.equal(await encryptName(ring, name), base32(concat(new Uint8Array([2, 1]), iv, ct)));
  // Sealed correctly but under an IV that is not the name's MAC: a second encryption of one name, refused.
  const otherIv = iv.map((b) => b ^ 0xff);
  const other = new Uint8Array(
    await s.encrypt({ name: 'AES-GCM', iv: otherIv, additionalData: text('filedock name|56') }, await aes(await hkdf(raw, 'filedock names enc')), plain),
  );
  await rejectsWith(decryptName(ring, base32(concat(new Uint8Array([2, 1]), otherIv, other))), 'integrity');
});

test('content: the 94-byte header, the content key under content_wrap, each chunk sealed with nonce prefix || index and file id || index || final', async () => {
  const raw = newFolderKey();
  const ring = new FolderKeyring(9, [await folderKeyFrom(raw, 9, 300)]);
  const data = pseudoRandom((1 << 20) + 4000, 21);
  const enc = await encryptBlob(new Blob([data]), ring);
  const c = await enc.slice(0, enc.size);
  assert.equal(new TextDecoder().decode(c.slice(0, 4)), 'FDV1');
  assert.deepEqual([...c.slice(4, 6)], [1, 20]);
  const version = new DataView(c.buffer).getUint32(6);
  assert.equal(version, 300);
  const fileId = c.slice(10, 26);
  const prefix = c.slice(26, 34);
  const contentKey = await gcmOpen(await hkdf(raw, 'filedock content wrap'), c.slice(34, 46), c.slice(46, 94), concat(text('FDV1'), fileId, u32(version)));
  assert.deepEqual(contentKey, enc.contentKey);

  const padded = paddedSize(data.length);
  const chunks = Math.ceil(padded / (1 << 20));
  assert.equal(chunks, 2);
  const plain: Uint8Array[] = [];
  for (let i = 0, at = 94; i < chunks; i++) {
    const len = Math.min(1 << 20, padded - i * (1 << 20)) + 16;
    const aad = concat(fileId, u32(i), new Uint8Array([i === chunks - 1 ? 1 : 0]));
    plain.push(await gcmOpen(contentKey, concat(prefix, u32(i)), c.slice(at, at + len), aad));
    at += len;
  }
  const stream = concat(...plain);
  assert.equal(stream.length, padded);
  assert.equal(new DataView(stream.buffer).getBigUint64(0), BigInt(data.length));
  assert.deepEqual(stream.subarray(8, 8 + data.length), data);
  assert.ok(
    stream.subarray(8 + data.length).every((b) => b === 0),
    'zero padding',
  );
});
