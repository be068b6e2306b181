import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateBits, strengthOf } from './strength';

test('short, repeated and sequential passphrases are weak', () => {
  assert.equal(strengthOf('abc'), 'weak');
  assert.equal(strengthOf('aaaaaaaaaaaaaaaaaaaa'), 'weak');
  assert.equal(strengthOf('abcdefghijklmnop'), 'weak');
  assert.equal(strengthOf('1234567890123'), 'weak');
});

test('longer mixed passphrases grow stronger, and more characters never lower the estimate', () => {
  assert.equal(strengthOf('correct horse battery staple'), 'strong');
  assert.notEqual(strengthOf('Tr0ub4dor&3x'), 'weak');
  let last = 0;
  for (const p of ['g', 'gx', 'gx7', 'gx7Q', 'gx7Q!', 'gx7Q!m', 'gx7Q!mz']) {
    const b = estimateBits(p);
    assert.ok(b >= last, `${p}: ${b} >= ${last}`);
    last = b;
  }
  assert.ok(estimateBits('şifre güçlü parola') > estimateBits('sifre guclu parola'), 'non-ASCII letters widen the pool');
});
