import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { isAppError } from '../errors';
import { fingerprint, parseIndex, signIndex, STORE_FORMAT, verifyIndex } from './format';
import { storeUrl } from './service';

const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
};
const entry = (over: Record<string, unknown> = {}) => ({
  id: 'hello',
  kind: 'app',
  name: 'Hello',
  publisher: 'acme',
  description: { en: 'Says hello' },
  license: { model: 'free' },
  versions: [{ version: '1.0.0', filedock_range: '>=0.1.0', file: 'hello-1.0.0.zip', size: 10, sha256: 'a'.repeat(64), permissions: ['files.read'] }],
  ...over,
});
const indexBytes = (entries: unknown[] = [entry()]) => Buffer.from(JSON.stringify({ format: STORE_FORMAT, name: 'S', generated_at: 'now', entries }));
const reasonOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    assert.ok(isAppError(e), String(e));
    return [e.code, (e.details as { reason: string }).reason];
  }
  assert.fail('not refused');
};

test('a signed index verifies; another key is key_changed, a changed byte signature_bad', () => {
  const k = pair();
  const bytes = indexBytes();
  const sig = Buffer.from(signIndex(bytes, k.privateKey));
  assert.equal(JSON.parse(sig.toString()).key, fingerprint(k.pem));
  assert.equal(verifyIndex(bytes, sig, k.pem).entries[0].id, 'hello');
  assert.deepEqual(
    reasonOf(() => verifyIndex(bytes, sig, pair().pem)),
    ['store_signature', 'key_changed'],
  );
  const changed = Buffer.from(bytes.toString().replace('Hello', 'Hellp'));
  assert.deepEqual(
    reasonOf(() => verifyIndex(changed, sig, k.pem)),
    ['store_signature', 'signature_bad'],
  );
  assert.deepEqual(
    reasonOf(() => verifyIndex(bytes, Buffer.from('nope'), k.pem)),
    ['store_signature', 'signature_bad'],
  );
});

test('the index shape: package names stay beside index.json, ranges must parse, unknown fields are refused', () => {
  for (const bad of [
    entry({ versions: [{ ...entry().versions[0], file: '../x.zip' }] }),
    entry({ versions: [{ ...entry().versions[0], file: 'sub/x.zip' }] }),
    entry({ versions: [{ ...entry().versions[0], filedock_range: 'not a range' }] }),
    entry({ kind: 'theme' }),
    entry({ colour: 'red' }),
  ])
    assert.deepEqual(
      reasonOf(() => parseIndex(indexBytes([bad]))),
      ['store_invalid', 'bad_index'],
    );
  assert.deepEqual(
    reasonOf(() => parseIndex(Buffer.from('{'))),
    ['store_invalid', 'bad_index'],
  );
  assert.equal(parseIndex(indexBytes([entry({ kind: 'language-pack' })])).entries[0].kind, 'language-pack');
});

test('fingerprint takes Ed25519 keys only; store URLs are normalised to their folder', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
  assert.throws(() => fingerprint(rsa), /validation_failed/);
  assert.match(fingerprint(pair().pem), /^[0-9a-f]{64}$/);
  assert.equal(storeUrl('https://apps.example/store/index.json'), 'https://apps.example/store/');
  assert.equal(storeUrl('http://h:8080/s?x=1#y'), 'http://h:8080/s/');
  assert.throws(() => storeUrl('file:///etc/'), /validation_failed/);
  assert.throws(() => storeUrl('https://u:p@h/'), /validation_failed/);
});
