import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../../test/helpers/tools';
import { fingerprintOf, hostKeyAlgorithms, hostKeyVerifier, keyTypeOf, parsePin } from './host-keys';

/** An ssh-ed25519 public key blob (type string + 32-byte key), as a server sends it. */
function ed25519Blob(): Buffer {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const type = Buffer.from('ssh-ed25519');
  const out = Buffer.alloc(4 + type.length + 4 + raw.length);
  out.writeUInt32BE(type.length, 0);
  type.copy(out, 4);
  out.writeUInt32BE(raw.length, 4 + type.length);
  raw.copy(out, 8 + type.length);
  return out;
}

const line = (blob: Buffer) => `ssh-ed25519 ${blob.toString('base64')}`;

test('pins parse as fingerprint or key line; anything else is null', () => {
  const blob = ed25519Blob();
  assert.equal(keyTypeOf(blob), 'ssh-ed25519');
  const fp = fingerprintOf(blob);
  assert.deepEqual(parsePin(fp), { fingerprint: fp });
  assert.deepEqual(parsePin(`${line(blob)} me@host`), { fingerprint: fp, keyType: 'ssh-ed25519' });
  assert.deepEqual(parsePin(`[nas]:2222 ${line(blob)}`), { fingerprint: fp, keyType: 'ssh-ed25519' });
  assert.equal(parsePin('ssh-rsa ' + blob.toString('base64')), null, 'the embedded type must match the written one');
  assert.equal(parsePin('SHA256:short'), null);
});

test('strict known_hosts matches hashed names, wildcards and negations, and honours @revoked', () => {
  const { dir, cleanup } = tempDir();
  try {
    const good = ed25519Blob();
    const revoked = ed25519Blob();
    const salt = Buffer.from('0123456789abcdef0123');
    const hashed = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update('[nas.lan]:2222').digest('base64')}`;
    const file = join(dir, 'known_hosts');
    writeFileSync(file, [`${hashed} ${line(good)}`, `*.lan,!bad.lan ${line(good)}`, `@revoked * ${line(revoked)}`].join('\n'));
    const policy = { mode: 'strict' as const, file };
    assert.equal(hostKeyVerifier(policy, 'nas.lan', 2222).verify(good), true, 'hashed entry');
    assert.equal(hostKeyVerifier(policy, 'box.lan', 22).verify(good), true, 'wildcard entry');
    const negated = hostKeyVerifier(policy, 'bad.lan', 22);
    assert.equal(negated.verify(good), false);
    assert.match(negated.refusal()!, /not in known_hosts/);
    const rev = hostKeyVerifier(policy, 'box.lan', 22);
    assert.equal(rev.verify(revoked), false);
    assert.match(rev.refusal()!, /@revoked/);
    assert.deepEqual(hostKeyAlgorithms(policy, 'box.lan', 22)?.[0], 'ssh-ed25519');
  } finally {
    cleanup();
  }
});

test('trust on first use records once, then refuses a different key and names both fingerprints', () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'state', 'known_hosts');
    const first = ed25519Blob();
    const other = ed25519Blob();
    const policy = { mode: 'tofu' as const, file };
    assert.equal(hostKeyVerifier(policy, '127.0.0.1', 2222).verify(first), true);
    assert.equal(hostKeyVerifier(policy, '127.0.0.1', 2222).verify(first), true);
    assert.equal(readFileSync(file, 'utf8'), `[127.0.0.1]:2222 ${line(first)}\n`);
    const v = hostKeyVerifier(policy, '127.0.0.1', 2222);
    assert.equal(v.verify(other), false);
    assert.ok(v.refusal()!.includes(fingerprintOf(other)) && v.refusal()!.includes(fingerprintOf(first)), v.refusal()!);
    assert.equal(hostKeyVerifier(policy, 'elsewhere', 22).verify(other), true, 'another host is a first use of its own');
  } finally {
    cleanup();
  }
});
