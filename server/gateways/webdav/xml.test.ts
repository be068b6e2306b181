import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XmlError, parseXml } from '../../lib/xml';
import { inner } from './xml';
import { LockTable, lockTimeout, parseIf, submittedTokens } from './locks';

test('xml: namespaces resolved, entities and CDATA read, values serialized self-contained; DTDs and bad prefixes refused', () => {
  const doc = parseXml(
    '<?xml version="1.0"?><D:prop xmlns:D="DAV:" xmlns="urn:z"><a>x &amp; &#x1F600;<![CDATA[<raw>]]><b xmlns="">in</b></a><!-- c --></D:prop>',
  );
  assert.deepEqual([doc.ns, doc.name], ['DAV:', 'prop']);
  const a = doc.children[0];
  assert.deepEqual([a.ns, a.name, a.text], ['urn:z', 'a', 'x & 😀<raw>']);
  assert.equal(inner(a), 'x &amp; 😀&lt;raw&gt;<b xmlns="">in</b>');
  for (const bad of ['<!DOCTYPE a [<!ENTITY x "y">]><a/>', '<a>&x;</a>', '<a xmlns:p=""><p:b/></a>', '<p:a/>', '<a><b></a>', '<a/><b/>', 'text', '<a>'])
    assert.throws(() => parseXml(bad), XmlError, bad);
  assert.throws(() => parseXml('<a>'.repeat(65) + '</a>'.repeat(65)), XmlError);
});

test('If header: tagged and untagged lists, Not, entity tags; malformed refused; submitted tokens', () => {
  const lists = parseIf('</dav/Box/a> (<opaquelocktoken:1> ["e1"]) (Not <DAV:no-lock>)');
  assert.deepEqual(lists, [
    {
      resource: '/dav/Box/a',
      conditions: [
        { not: false, token: 'opaquelocktoken:1', etag: undefined },
        { not: false, token: undefined, etag: '"e1"' },
      ],
    },
    { resource: '/dav/Box/a', conditions: [{ not: true, token: 'DAV:no-lock', etag: undefined }] },
  ]);
  assert.deepEqual([...submittedTokens(lists)], ['opaquelocktoken:1']);
  for (const bad of ['(', '()', '(<a> junk)', 'junk']) assert.throws(() => parseIf(bad), bad);
  assert.equal(lockTimeout('Infinite, Second-4100000000'), 3600);
  assert.equal(lockTimeout('Second-60'), 60);
});

test('locks: exclusive blocks everyone else, shared locks share, depth infinity covers below, expired locks vanish', async () => {
  const t = new LockTable();
  const base = { root: '/dav/Box/d/', owner: '', userId: 1, timeoutS: 1 };
  const d = t.take({ ...base, key: '1:/d', scope: 'exclusive', depth: 'infinity' });
  assert.throws(() => t.take({ ...base, key: '1:/d/f', scope: 'shared', depth: '0' }), /locked/);
  assert.throws(() => t.check('1:/d/f', new Set(), false), /lock token/);
  t.check('1:/d/f', new Set([d.token]), false);
  t.check('1:/dx', new Set(), true);
  t.release(d.token);
  t.take({ ...base, key: '1:/s', scope: 'shared', depth: '0' });
  t.take({ ...base, key: '1:/s', scope: 'shared', depth: '0' });
  assert.equal(t.size, 2);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(t.size, 0, 'expired without a timer');
});
