import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as c from './crypto';
import { quickKdf, rejectsWith } from './crypto/testing';
import { rotateMembers } from './members-rotate';

const person = async (id: number) => {
  const v = await c.createVault(`passphrase of ${id}`, id, quickKdf());
  return { id, name: `p${id}`, public_key: v.record.public_key, keys: v.keys };
};

test('a rotation wraps one new key, the next version, for every member of the new set and for nobody else', async () => {
  const [owner, bea, cem] = await Promise.all([person(1), person(2), person(3)]);
  const body = await rotateMembers(c, 42, 1, [owner, bea]);
  assert.equal(body.key_version, 2);
  assert.deepEqual(
    body.members.map((m) => m.user_id),
    [1, 2],
  );
  const [mine, hers] = await Promise.all([
    c.unwrapFolderKey(body.members[0].wrapped_key, owner.keys, 42, 2),
    c.unwrapFolderKey(body.members[1].wrapped_key, bea.keys, 42, 2),
  ]);
  // The same key: a name encrypted with one ring decrypts with the other.
  const stored = await c.encryptName(new c.FolderKeyring(42, [mine]), 'plan.txt');
  assert.equal(await c.decryptName(new c.FolderKeyring(42, [hers]), stored), 'plan.txt');
  // Bound to person, folder and version: no one else opens it, nor under an old version or another folder.
  await rejectsWith(c.unwrapFolderKey(body.members[1].wrapped_key, cem.keys, 42, 2), 'wrong_key');
  await rejectsWith(c.unwrapFolderKey(body.members[1].wrapped_key, bea.keys, 42, 1), 'wrong_key');
  await rejectsWith(c.unwrapFolderKey(body.members[1].wrapped_key, bea.keys, 43, 2), 'wrong_key');
});

test('each rotation makes a different key', async () => {
  const owner = await person(1);
  const [a, b] = await Promise.all([rotateMembers(c, 7, 3, [owner]), rotateMembers(c, 7, 3, [owner])]);
  const [ka, kb] = await Promise.all([
    c.unwrapFolderKey(a.members[0].wrapped_key, owner.keys, 7, 4),
    c.unwrapFolderKey(b.members[0].wrapped_key, owner.keys, 7, 4),
  ]);
  assert.notEqual(await c.encryptName(new c.FolderKeyring(7, [ka]), 'x'), await c.encryptName(new c.FolderKeyring(7, [kb]), 'x'));
});
