import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { tempDir } from '../../../test/helpers/tools';
import { freshHostKey, loadHostKey } from './host-key';

const { utils } = ssh2;
const parses = (k: string) => !(utils.parseKey(k) instanceof Error);

test('a generated key ssh2 cannot parse back is thrown away, not written (its keygen strips a leading zero byte)', () => {
  let broken: { private: string; public: string } | undefined;
  for (let i = 0; i < 20_000 && !broken; i++) {
    const k = utils.generateKeyPairSync('ed25519');
    if (!parses(k.private) || !parses(k.public)) broken = k;
  }
  assert.ok(broken, 'ssh2 made no unparseable key in 20,000 tries');
  const made = [broken, utils.generateKeyPairSync('ed25519')];
  const { dir, cleanup } = tempDir('filedock-hostkey-');
  try {
    const key = loadHostKey(join(dir, 'k'), () => made.shift()!);
    assert.equal(made.length, 0, 'the second key was used');
    assert.match(key.publicLine, /^ssh-ed25519 /);
    assert.match(key.fingerprint, /^SHA256:/);
    assert.equal(loadHostKey(join(dir, 'k')).fingerprint, key.fingerprint, 'kept across loads');
    assert.throws(() => freshHostKey(() => broken!), /no parseable ed25519 host key/);
  } finally {
    cleanup();
  }
});

test('a key file that is not a key is refused with what to do, never replaced', () => {
  const { dir, cleanup } = tempDir('filedock-hostkey-');
  try {
    writeFileSync(join(dir, 'k'), 'garbage');
    assert.throws(() => loadHostKey(join(dir, 'k')), /unreadable .*remove it and restart/);
    assert.equal(readFileSync(join(dir, 'k'), 'utf8'), 'garbage');
  } finally {
    cleanup();
  }
});
