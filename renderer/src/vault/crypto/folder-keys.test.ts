import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type VaultKeys, createVault, decryptName, encryptName, FolderKeyring, folderKeyFrom, newFolderKey, unwrapFolderKey, wrapFolderKey } from './index';
import { b64u, fromB64u } from './bytes';
import { quickKdf, rejectsWith, ringOf } from './testing';

test('a folder key wrapped for a member opens for that member only, for that folder and version only', async () => {
  const [alice, bob] = await Promise.all([createVault('a', 1, quickKdf()), createVault('b', 2, quickKdf())]);
  const raw = newFolderKey();
  assert.equal(raw.length, 32);
  const forBob = await wrapFolderKey(raw, bob.record.public_key, 10, 3, 2);
  assert.equal(fromB64u(forBob)?.length, 65 + 12 + 32 + 16);
  const forAlice = await wrapFolderKey(raw, alice.record.public_key, 10, 3, 1);
  const bobs = await unwrapFolderKey(forBob, bob.keys, 10, 3);
  assert.equal(bobs.folderId, 10);
  assert.equal(bobs.version, 3);
  // Both hold the same key: a name one encrypts, the other decrypts.
  const alices = await unwrapFolderKey(forAlice, alice.keys, 10, 3);
  const name = await encryptName(new FolderKeyring(10, [alices]), 'report.pdf');
  assert.equal(await decryptName(new FolderKeyring(10, [bobs]), name), 'report.pdf');

  await rejectsWith(unwrapFolderKey(forBob, bob.keys, 11, 3), 'wrong_key');
  await rejectsWith(unwrapFolderKey(forBob, bob.keys, 10, 2), 'wrong_key');
  await rejectsWith(unwrapFolderKey(forBob, alice.keys, 10, 3), 'wrong_key');
  // Bob's key pair but another user id in the info: a key wrapped for user 2 is not one for user 7.
  await rejectsWith(unwrapFolderKey(forBob, { ...bob.keys, userId: 7 } satisfies VaultKeys, 10, 3), 'wrong_key');
  const bytes = fromB64u(forBob)!;
  for (const at of [1, 70, 100, bytes.length - 1]) {
    const damaged = bytes.slice();
    damaged[at] ^= 1;
    await rejectsWith(unwrapFolderKey(b64u(damaged), bob.keys, 10, 3), 'wrong_key');
  }
  await rejectsWith(unwrapFolderKey(forBob.slice(0, -4), bob.keys, 10, 3), 'wrong_key');
  await rejectsWith(unwrapFolderKey('not b64u!', bob.keys, 10, 3), 'wrong_key');
  await rejectsWith(wrapFolderKey(raw, 'AAAA', 10, 3, 2), 'wrong_key');
});

test('each wrap is fresh (ephemeral key, nonce) and versions are 1 to 65535', async () => {
  const bob = await createVault('b', 2, quickKdf());
  const raw = newFolderKey();
  const a = await wrapFolderKey(raw, bob.record.public_key, 1, 1, 2);
  const b = await wrapFolderKey(raw, bob.record.public_key, 1, 1, 2);
  assert.notEqual(a, b);
  await assert.rejects(wrapFolderKey(raw, bob.record.public_key, 1, 0, 2), RangeError);
  await assert.rejects(folderKeyFrom(raw, 1, 65536), RangeError);
});

test("a keyring: the newest version, each version by number, a missing one or another folder's key is wrong_key", async () => {
  const ring = await ringOf(4, [2, 5, 1]);
  assert.equal(ring.newest.version, 5);
  assert.equal(ring.get(2).version, 2);
  assert.throws(
    () => ring.get(3),
    (e: any) => e.code === 'wrong_key',
  );
  const other = await folderKeyFrom(newFolderKey(), 9, 1);
  assert.throws(
    () => new FolderKeyring(4, [ring.get(1), other]),
    (e: any) => e.code === 'wrong_key',
  );
  assert.throws(
    () => new FolderKeyring(4, []),
    (e: any) => e.code === 'wrong_key',
  );
});
