import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type VaultRecord,
  createVault,
  defaultKdf,
  rewrapPrivateKey,
  unlockVault,
  unlockWithRecovery,
  unwrapFolderKey,
  wrapFolderKey,
  newFolderKey,
} from './index';
import { fromB64u } from './bytes';
import { quickKdf, rejectsWith } from './testing';

test('the default Argon2id parameters (64 MiB, t = 3, p = 1): create and unlock, timed', async (t) => {
  const kdf = defaultKdf();
  assert.deepEqual({ ...kdf, salt: '' }, { alg: 'argon2id', m: 65536, t: 3, p: 1, salt: '' });
  assert.equal(fromB64u(kdf.salt)?.length, 16);
  const t0 = performance.now();
  const made = await createVault('correct horse battery staple', 42);
  const t1 = performance.now();
  const { keys, auth } = await unlockVault(made.record, 'correct horse battery staple', 42);
  const t2 = performance.now();
  t.diagnostic(`argon2id default: create ${(t1 - t0).toFixed(0)} ms, unlock ${(t2 - t1).toFixed(0)} ms`);
  assert.equal(made.record.kdf.m, 65536);
  assert.equal(auth, made.auth);
  assert.equal(keys.publicKey, made.record.public_key);
  await rejectsWith(unlockVault(made.record, 'correct horse battery stapler', 42), 'wrong_passphrase');
});

test('create: the record, two distinct proofs, a recovery key of 13 groups of four lowercase base32', async () => {
  const made = await createVault('pass', 1, quickKdf());
  assert.match(made.recoveryKey, /^[a-z2-7]{4}( [a-z2-7]{4}){12}$/);
  assert.equal(fromB64u(made.record.public_key)?.length, 65);
  assert.equal(fromB64u(made.record.public_key)?.[0], 4);
  assert.equal(fromB64u(made.auth)?.length, 32);
  assert.equal(fromB64u(made.recovery_auth)?.length, 32);
  assert.notEqual(made.auth, made.recovery_auth);
  assert.notEqual(made.record.wrapped_private_key, made.record.recovery_wrapped_private_key);
  assert.equal(made.keys.userId, 1);
  assert.equal(made.keys.publicKey, made.record.public_key);
  // Two vaults from one passphrase share nothing (fresh salt, fresh pair).
  const again = await createVault('pass', 1, quickKdf());
  assert.notEqual(again.auth, made.auth);
  assert.notEqual(again.record.public_key, made.record.public_key);
});

test('unlock: the same proof each time; a wrong passphrase, another person, NFC', async () => {
  const made = await createVault('Ünïcode pass', 9, quickKdf());
  const a = await unlockVault(made.record, 'Ünïcode pass', 9);
  assert.equal(a.auth, made.auth);
  // Decomposed input is the same passphrase after NFC.
  const b = await unlockVault(made.record, 'Ünïcode pass'.normalize('NFD'), 9);
  assert.equal(b.auth, made.auth);
  await rejectsWith(unlockVault(made.record, 'ünïcode pass', 9), 'wrong_passphrase');
  await rejectsWith(unlockVault(made.record, '', 9), 'wrong_passphrase');
  // The sealed private key is bound to its person: the same record under another user id does not open.
  await rejectsWith(unlockVault(made.record, 'Ünïcode pass', 10), 'wrong_passphrase');
});

test('the recovery key unlocks the same key pair, whatever its spacing and case; a malformed or wrong one is bad_recovery_key', async () => {
  const made = await createVault('pass', 3, quickKdf());
  const forms = [made.recoveryKey, made.recoveryKey.toUpperCase(), made.recoveryKey.replace(/ /g, ''), `  ${made.recoveryKey.replace(/ /g, '-')}\n`];
  for (const form of forms) {
    const { keys, recovery_auth } = await unlockWithRecovery(made.record, form, 3);
    assert.equal(recovery_auth, made.recovery_auth);
    assert.equal(keys.publicKey, made.record.public_key);
  }
  // The recovered private key is the real one: it opens a folder key wrapped for the vault's public key.
  const { keys } = await unlockWithRecovery(made.record, made.recoveryKey, 3);
  const wrapped = await wrapFolderKey(newFolderKey(), made.record.public_key, 1, 1, 3);
  await unwrapFolderKey(wrapped, keys, 1, 1);

  const compact = made.recoveryKey.replace(/ /g, '');
  const malformed = [compact.slice(0, -1), `${compact}a`, `${compact.slice(0, -1)}1`, `${compact.slice(0, -1)}0`, '', 'not a key'];
  for (const bad of malformed) await rejectsWith(unlockWithRecovery(made.record, bad, 3), 'bad_recovery_key');
  const other = await createVault('pass', 3, quickKdf());
  await rejectsWith(unlockWithRecovery(made.record, other.recoveryKey, 3), 'bad_recovery_key');
});

test('rewrap: the new passphrase unlocks, the old one no longer does, the recovery key still does', async () => {
  const made = await createVault('old pass', 5, quickKdf());
  const { keys } = await unlockWithRecovery(made.record, made.recoveryKey, 5);
  const re = await rewrapPrivateKey(keys, 'new pass', quickKdf());
  assert.notEqual(re.kdf.salt, made.record.kdf.salt);
  const record = { ...made.record, kdf: re.kdf, wrapped_private_key: re.wrapped_private_key };
  const opened = await unlockVault(record, 'new pass', 5);
  assert.equal(opened.auth, re.auth);
  assert.equal(opened.keys.publicKey, made.record.public_key);
  await rejectsWith(unlockVault(record, 'old pass', 5), 'wrong_passphrase');
  await unlockWithRecovery(record, made.recoveryKey, 5);
});

test("a damaged record is integrity: bad parameters, a wrapped key that is not b64u, a public key that is not the private key's", async () => {
  const made = await createVault('pass', 6, quickKdf());
  const other = await createVault('pass', 6, quickKdf());
  const damaged: VaultRecord[] = [
    { ...made.record, kdf: { ...made.record.kdf, alg: 'scrypt' as 'argon2id' } },
    { ...made.record, kdf: { ...made.record.kdf, m: 0 } },
    { ...made.record, kdf: { ...made.record.kdf, t: 1.5 } },
    { ...made.record, kdf: { ...made.record.kdf, salt: 'a+b/' } },
    { ...made.record, wrapped_private_key: '*' },
    { ...made.record, public_key: other.record.public_key },
  ];
  for (const record of damaged) await rejectsWith(unlockVault(record, 'pass', 6), 'integrity');
  await rejectsWith(unlockVault({ ...made.record, wrapped_private_key: 'AAAA' }, 'pass', 6), 'wrong_passphrase');
});
