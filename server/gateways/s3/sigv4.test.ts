import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { chunkSignature, readClaim, uriEncode, verify, type RequestParts } from './sigv4';
import { childrenNamed, childText, parseXml } from './xml';

// The streaming example of the AWS SigV4 documentation: seed signature, then 64 KiB and 1 KiB of 'a', then the final chunk.
test('chunk signatures chain as in the documented streaming example', () => {
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
  const scope = '20130524/us-east-1/s3/aws4_request';
  const h = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();
  const key = h(h(h(h(`AWS4${secret}`, '20130524'), 'us-east-1'), 's3'), 'aws4_request');
  const claim = {
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    amzDate: '20130524T000000Z',
    scope,
    signedHeaders: [],
    signature: '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
    payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    presigned: false,
  };
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const s1 = chunkSignature(key, claim, claim.signature, sha(Buffer.alloc(65536, 'a')));
  assert.equal(s1, 'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648');
  const s2 = chunkSignature(key, claim, s1, sha(Buffer.alloc(1024, 'a')));
  assert.equal(s2, '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497');
  assert.equal(chunkSignature(key, claim, s2, sha(Buffer.alloc(0))), 'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9');
});

test('a header claim is checked against the clock and the signature', () => {
  const now = Date.UTC(2026, 10, 25, 12, 0, 0);
  const amz = '20261125T120000Z';
  const parts: RequestParts = {
    method: 'GET',
    rawPath: '/Box/a%20b.txt',
    rawQuery: 'x=1',
    headers: { host: 'h:1', 'x-amz-date': amz, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
  };
  const sign = (secret: string) => {
    const canonical = [
      'GET',
      '/Box/a%20b.txt',
      'x=1',
      'host:h:1\nx-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:' + amz + '\n',
      'host;x-amz-content-sha256;x-amz-date',
      'UNSIGNED-PAYLOAD',
    ].join('\n');
    const scope = '20261125/us-east-1/s3/aws4_request';
    const h = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();
    const key = h(h(h(h(`AWS4${secret}`, '20261125'), 'us-east-1'), 's3'), 'aws4_request');
    return h(key, ['AWS4-HMAC-SHA256', amz, scope, createHash('sha256').update(canonical).digest('hex')].join('\n')).toString('hex');
  };
  parts.headers.authorization = `AWS4-HMAC-SHA256 Credential=fdk_1/20261125/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${sign('s3cret')}`;
  const claim = readClaim(parts, new URLSearchParams('x=1'), now)!;
  assert.equal(claim.accessKeyId, 'fdk_1');
  verify(parts, claim, 's3cret');
  assert.throws(() => verify(parts, claim, 'other'), { code: 'SignatureDoesNotMatch' });
  assert.throws(() => readClaim(parts, new URLSearchParams(), now + 16 * 60_000), { code: 'RequestTimeTooSkewed' });
  assert.equal(readClaim({ ...parts, headers: {} }, new URLSearchParams(), now), null, 'anonymous');
});

test('S3 URI encoding keeps only unreserved characters', () => {
  assert.equal(uriEncode("a b/c!*'()~", true), 'a%20b/c%21%2A%27%28%29~');
  assert.equal(uriEncode('a/b'), 'a%2Fb');
});

test('the XML reader refuses DTDs, entities and broken nesting; reads plain documents', () => {
  const bomb = '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><Delete><Object><Key>&b;</Key></Object></Delete>';
  assert.equal(parseXml(bomb), null);
  assert.equal(parseXml('<Delete><Object><Key>x</Object></Key></Delete>'), null);
  assert.equal(parseXml('<Delete><Object><Key>&unknown;</Key></Object></Delete>'), null);
  const ok = parseXml('<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="urn:x"><Quiet>true</Quiet><Object><Key>a &amp; b&#x2F;c</Key></Object></Delete>');
  assert.equal(ok?.children[1].children[0].text, 'a & b/c');
});

test('S3 bodies go through the shared reader (as WebDAV): comments, CDATA, prefixes read; unbound prefixes and deep nesting refused', () => {
  const doc = parseXml(
    '\uFEFF<?xml version="1.0"?><!-- sent by a tool --><s3:Delete xmlns:s3="http://s3.amazonaws.com/doc/2006-03-01/"><s3:Object><s3:Key><![CDATA[a&b <c>]]></s3:Key></s3:Object></s3:Delete>',
  );
  assert.ok(doc);
  assert.equal(childText(childrenNamed(doc, 'Object')[0], 'Key'), 'a&b <c>');
  assert.equal(parseXml('<p:Delete><p:Object/></p:Delete>'), null);
  assert.equal(parseXml('<a>'.repeat(65) + '</a>'.repeat(65)), null);
});
