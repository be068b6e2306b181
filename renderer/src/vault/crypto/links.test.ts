import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkFragment, parseLinkFragment } from './index';
import { b64u, base32, fromB64u, fromBase32 } from './bytes';

test('a link fragment round trips, with or without its #', () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  const fragment = linkFragment(key);
  assert.match(fragment, /^#k=[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(parseLinkFragment(fragment), key);
  assert.deepEqual(parseLinkFragment(fragment.slice(1)), key);
});

test('a fragment of the wrong length, alphabet or shape is bad_link_key', () => {
  const good = linkFragment(new Uint8Array(32).fill(7));
  const k = good.slice(4);
  const bad = [
    '',
    '#',
    '#k=',
    good.slice(0, -1),
    `${good}A`,
    `#k=${k.slice(0, -1)}+`,
    `#k=${k.slice(0, -1)}/`,
    `#k=${k.slice(0, -1)}=`,
    `#k=${k.slice(0, -1)}B`, // non-zero padding bits: not the canonical encoding of any 32 bytes
    `#key=${k}`,
    `#k=${k}&x=1`,
    `#k=${b64u(new Uint8Array(24))}`,
  ];
  for (const hash of bad)
    assert.throws(
      () => parseLinkFragment(hash),
      (e: any) => e.code === 'bad_link_key',
      hash,
    );
  assert.throws(
    () => linkFragment(new Uint8Array(31)),
    (e: any) => e.code === 'bad_link_key',
  );
});

test('b64u and base32 round trip every length and refuse non-canonical input', () => {
  for (let n = 0; n < 40; n++) {
    const bytes = crypto.getRandomValues(new Uint8Array(n));
    assert.deepEqual(fromB64u(b64u(bytes)), bytes);
    assert.deepEqual(fromBase32(base32(bytes)), bytes);
    assert.equal(
      b64u(bytes),
      btoa(String.fromCharCode(...bytes))
        .replace(/=+$/, '')
        .replace(/\+/g, '-')
        .replace(/\//g, '_'),
    );
  }
  assert.equal(base32(new TextEncoder().encode('foobar')), 'mzxw6ytboi'); // RFC 4648 §10, lowercased, unpadded
  for (const text of ['a', 'abcde', 'aB', 'AAB', 'AA=', 'A+']) assert.equal(fromB64u(text), null, text);
  for (const text of ['a', 'abc', 'abcdef', 'ab1', 'mzxw6ytboj', 'MZXW6YTBOI']) assert.equal(fromBase32(text), null, text);
});
