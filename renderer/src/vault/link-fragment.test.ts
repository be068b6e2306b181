import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkHash, splitLinkHash } from './link-fragment';

const KEY = 'A'.repeat(42) + 'g';
const FRAGMENT = `#k=${KEY}`;

test('a name round-trips through the fragment, non-ASCII and URL-special characters included', () => {
  for (const name of ['report.pdf', 'Ayşe’s notes & plans #2.txt', 'über/?=.md', '写真.jpg']) {
    const hash = linkHash(FRAGMENT, name);
    assert.match(hash, /^#k=[A-Za-z0-9_-]+&n=[A-Za-z0-9_-]*$/, 'only URL-safe characters');
    assert.deepEqual(splitLinkHash(hash), { key: `k=${KEY}`, name });
  }
});

test('a missing key reads as none, a missing or broken name as empty', () => {
  assert.deepEqual(splitLinkHash(''), { key: null, name: '' });
  assert.deepEqual(splitLinkHash('#n=YQ'), { key: null, name: 'a' });
  assert.deepEqual(splitLinkHash('#k='), { key: null, name: '' });
  assert.deepEqual(splitLinkHash(`#k=${KEY}`), { key: `k=${KEY}`, name: '' });
  // 0xff is not UTF-8: no name rather than mojibake.
  assert.deepEqual(splitLinkHash(`#k=${KEY}&n=_w`), { key: `k=${KEY}`, name: '' });
  assert.deepEqual(splitLinkHash(`#k=${KEY}&n=%%%`), { key: `k=${KEY}`, name: '' });
});

test('a short key is passed on as it is, for the crypto module to refuse', () => {
  assert.equal(splitLinkHash(`#k=${KEY.slice(0, 20)}&n=YQ`).key, `k=${KEY.slice(0, 20)}`);
});

test('with the crypto module: the content key survives linkFragment → linkHash → splitLinkHash → parseLinkFragment', async () => {
  const { linkFragment, parseLinkFragment } = await import('./crypto');
  const key = crypto.getRandomValues(new Uint8Array(32));
  const { key: k, name } = splitLinkHash(linkHash(linkFragment(key), 'Ayşe.pdf'));
  assert.deepEqual(parseLinkFragment(k!), key);
  assert.equal(name, 'Ayşe.pdf');
  assert.throws(() => parseLinkFragment(splitLinkHash(`${linkFragment(key).slice(0, 30)}&n=YQ`).key!), { name: 'VaultError' });
});
