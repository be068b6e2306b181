import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decryptName, encryptName, FolderKeyring, isEncryptedName } from './index';
import { base32, fromBase32 } from './bytes';
import { rejectsWith, ringOf } from './testing';

test('names: deterministic for one key, different between folders and between versions, lowercase base32 only', async () => {
  const ring = await ringOf(1, [1]);
  const a = await encryptName(ring, 'Holiday photos');
  assert.equal(await encryptName(ring, 'Holiday photos'), a);
  assert.notEqual(await encryptName(ring, 'Holiday photos 2'), a);
  assert.match(a, /^[a-z2-7]+$/);
  assert.ok(isEncryptedName(a));
  assert.equal(await decryptName(ring, a), 'Holiday photos');
  // Another folder id with the very same key bytes still differs: the folder id is bound in.
  const sameKeyOtherFolder = new FolderKeyring(2, [{ ...ring.get(1), folderId: 2 }]);
  assert.notEqual(await encryptName(sameKeyOtherFolder, 'Holiday photos'), a);
  await rejectsWith(decryptName(sameKeyOtherFolder, a), 'integrity');
  assert.notEqual(await encryptName(await ringOf(1), 'Holiday photos'), a);
});

test('names across versions: new names use the newest, the keyring decrypts every version it holds', async () => {
  const v1 = await ringOf(3, [1]);
  const v2 = await ringOf(3, [2]);
  const both = new FolderKeyring(3, [v1.get(1), v2.get(2)]);
  const old = await encryptName(v1, 'a.txt');
  const fresh = await encryptName(both, 'a.txt');
  assert.notEqual(fresh, old);
  assert.equal(fromBase32(fresh)![1], 2, "the version is the stored name's first two bytes");
  assert.equal(fromBase32(old)![1], 1);
  assert.equal(await decryptName(both, old), 'a.txt');
  assert.equal(await decryptName(both, fresh), 'a.txt');
  await rejectsWith(decryptName(v1, fresh), 'wrong_key');
});

test('length: 129 bytes fit in 255 characters; 130 bytes, also of multi-byte UTF-8, are name_too_long', async () => {
  const ring = await ringOf(1);
  const longest = await encryptName(ring, 'x'.repeat(129));
  assert.equal(longest.length, 255);
  assert.ok(isEncryptedName(longest));
  assert.equal(await decryptName(ring, longest), 'x'.repeat(129));
  await rejectsWith(encryptName(ring, 'x'.repeat(130)), 'name_too_long');
  // Bytes, not characters: 65 two-byte letters are 130 bytes, 64 are 128; 32 four-byte emoji and two letters are 130.
  await rejectsWith(encryptName(ring, 'ğ'.repeat(65)), 'name_too_long');
  assert.equal(await decryptName(ring, await encryptName(ring, 'ğ'.repeat(64))), 'ğ'.repeat(64));
  await rejectsWith(encryptName(ring, '😀'.repeat(32) + 'ab'), 'name_too_long');
  const shortest = await encryptName(ring, 'a');
  assert.ok(shortest.length >= 32, 'even a one-letter name has the encrypted shape');
  assert.ok(isEncryptedName(shortest));
});

test('NFC: the composed and decomposed forms of a name are one name', async () => {
  const ring = await ringOf(1);
  const composed = 'Çalışma ağacı é.txt'.normalize('NFC');
  const decomposed = composed.normalize('NFD');
  assert.notEqual(composed, decomposed);
  const a = await encryptName(ring, composed);
  assert.equal(await encryptName(ring, decomposed), a);
  assert.equal(await decryptName(ring, a), composed);
});

test('decryptName: not of the encrypted shape is not_encrypted; tampered is integrity', async () => {
  const ring = await ringOf(1);
  await rejectsWith(decryptName(ring, 'plain name.txt'), 'not_encrypted');
  await rejectsWith(decryptName(ring, 'a'.repeat(31)), 'not_encrypted');
  await rejectsWith(decryptName(ring, 'A'.repeat(40)), 'not_encrypted');
  const stored = await encryptName(ring, 'secret.doc');
  const bytes = fromBase32(stored)!;
  for (const at of [5, 20, bytes.length - 1]) {
    const t = bytes.slice();
    t[at] ^= 1;
    await rejectsWith(decryptName(ring, base32(t)), 'integrity');
  }
  // Right shape, too short to hold a version, an IV and a tag.
  await rejectsWith(decryptName(ring, base32(new Uint8Array([0, 1, ...new Uint8Array(18)]))), 'integrity');
});

test('isEncryptedName: 32 to 255 characters of [a-z2-7]', () => {
  assert.ok(isEncryptedName('a'.repeat(32)));
  assert.ok(isEncryptedName('2'.repeat(255)));
  assert.ok(!isEncryptedName('a'.repeat(31)));
  assert.ok(!isEncryptedName('a'.repeat(256)));
  for (const c of ['A', '1', '0', '8', '9', '-', '_', '=', ' ', '.']) assert.ok(!isEncryptedName(`${'a'.repeat(40)}${c}`), c);
});
