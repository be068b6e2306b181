/**
 * The S3 gateway's edges with the AWS SDK v3 and hand-signed requests: wrong
 * signatures, clock skew, presigned expiry, ranges and conditions,
 * DeleteObjects quiet, ListObjectsV2 paging over 2,500 keys, CopyObject across
 * buckets, aws-chunked bodies with per-chunk signatures, a signed payload
 * that does not match, traversal in keys and XML bombs.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  UploadPartCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { tempDir } from '../helpers/tools';
import { signed, startS3Env, type S3Env } from './s3-setup';

const err = (p: Promise<unknown>) =>
  p.then(
    () => assert.fail('expected a refusal'),
    (e) => e as { name: string; $metadata: { httpStatusCode: number } },
  );

/** An aws-chunked body of `chunks`, each signed in the chain from `seed` (or with a bad signature at `bad`). */
function chunked(chunks: Buffer[], seed: string, key: Buffer, amz: string, bad = -1): Buffer {
  const scope = `${amz.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  let prev = seed;
  const out: Buffer[] = [];
  for (const [i, c] of [...chunks, Buffer.alloc(0)].entries()) {
    let sig = createHmac('sha256', key)
      .update(['AWS4-HMAC-SHA256-PAYLOAD', amz, scope, prev, sha(Buffer.alloc(0)), sha(c)].join('\n'))
      .digest('hex');
    prev = sig;
    if (i === bad) sig = sig.replace(/^./, (x) => (x === '0' ? '1' : '0'));
    out.push(Buffer.from(`${c.length.toString(16)};chunk-signature=${sig}\r\n`), c, Buffer.from('\r\n'));
  }
  return Buffer.concat(out);
}

describe('S3 gateway edges with the AWS SDK', () => {
  let e: S3Env;
  let s3: S3Client;
  let other: string;
  let cleanupOther: () => void;
  const uploaded: any[] = [];
  before(async () => {
    e = await startS3Env();
    s3 = e.sdk();
    ({ dir: other, cleanup: cleanupOther } = tempDir('filedock-s3-other-'));
    mkdirSync(join(other, 'many'));
    for (let i = 0; i < 2500; i++) writeFileSync(join(other, 'many', `k${String(i).padStart(5, '0')}.txt`), `${i}`);
    mkdirSync(join(other, 'empty'));
    const r = await e.s.api('POST', '/api/admin/storages', { token: e.admin, body: { name: 'Other', driver: 'local', config: { path: other } } });
    assert.equal(r.status, 200);
    writeFileSync(join(e.root, 'ten.txt'), '0123456789');
    e.s.server.bus.on('file.uploaded', (x) => void uploaded.push(x));
  });
  after(async () => {
    await e?.close();
    cleanupOther?.();
  });

  test('wrong secret, unknown key, anonymous, clock skew: refused in S3 words', async () => {
    assert.deepEqual(
      (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name),
      ['Box', 'Other'],
    );
    // Another first character, whatever the secret begins with (an `x` prefix was the same secret one time in 62).
    const first = e.creds.secret_access_key.startsWith('x') ? 'y' : 'x';
    const wrong = await err(e.sdk({ ...e.creds, secret_access_key: first + e.creds.secret_access_key.slice(1) }).send(new ListBucketsCommand({})));
    assert.deepEqual([wrong.name, wrong.$metadata.httpStatusCode], ['SignatureDoesNotMatch', 403]);
    const unknown = await err(e.sdk({ ...e.creds, access_key_id: 'fdk_999' }).send(new ListBucketsCommand({})));
    assert.equal(unknown.name, 'InvalidAccessKeyId');
    const anon = await fetch(`${e.endpoint}/Box/ten.txt`);
    assert.equal(anon.status, 403);
    assert.match(await anon.text(), /<Code>AccessDenied<\/Code>/);
    const skewed = e.sdk();
    skewed.config.systemClockOffset = -20 * 60_000;
    const skew = await err(skewed.send(new ListBucketsCommand({})));
    assert.deepEqual([skew.name, skew.$metadata.httpStatusCode], ['RequestTimeTooSkewed', 403]);
  });

  test('a presigned URL works until it expires, then is refused (no replay after expiry)', async () => {
    // X-Amz-Date has whole seconds, so a URL signed late in a second lives up to a second less than asked:
    // 3 s leaves the first fetch at least 2 s on a loaded machine; the wait runs to the signed expiry.
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'Box', Key: 'ten.txt' }), { expiresIn: 3 });
    const first = await fetch(url);
    assert.equal(await first.text(), '0123456789');
    const amz = new URL(url).searchParams.get('X-Amz-Date')!;
    const expiry = Date.parse(amz.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z')) + 3000;
    await new Promise((r) => setTimeout(r, Math.max(0, expiry - Date.now()) + 1100));
    const later = await fetch(url);
    assert.equal(later.status, 403);
    assert.match(await later.text(), /AccessDenied[\s\S]*expired/);
  });

  test('ranges, conditional GETs and HEAD', async () => {
    const part = await s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'ten.txt', Range: 'bytes=2-5' }));
    assert.equal(await part.Body!.transformToString(), '2345');
    assert.equal(part.ContentRange, 'bytes 2-5/10');
    const tail = await s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'ten.txt', Range: 'bytes=-3' }));
    assert.equal(await tail.Body!.transformToString(), '789');
    const bad = await err(s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'ten.txt', Range: 'bytes=100-200' })));
    assert.deepEqual([bad.name, bad.$metadata.httpStatusCode], ['InvalidRange', 416]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'Box', Key: 'ten.txt' }));
    assert.equal(head.ContentLength, 10);
    const same = await err(s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'ten.txt', IfNoneMatch: head.ETag })));
    assert.equal(same.$metadata.httpStatusCode, 304);
    const changed = await err(s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'ten.txt', IfMatch: '"nope"' })));
    assert.equal(changed.$metadata.httpStatusCode, 412);
    const missing = await err(s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'nope.txt' })));
    assert.equal(missing.name, 'NoSuchKey');
    const noBucket = await err(s3.send(new GetObjectCommand({ Bucket: 'Nope', Key: 'x' })));
    assert.equal(noBucket.name, 'NoSuchBucket');
  });

  test('ListObjectsV2 pages 2,500 keys with continuation tokens, in order, none twice; delimiter gives folders', async () => {
    let token: string | undefined;
    const keys: string[] = [];
    let pages = 0;
    do {
      const r = await s3.send(new ListObjectsV2Command({ Bucket: 'Other', Prefix: 'many/', ContinuationToken: token }));
      keys.push(...(r.Contents ?? []).map((c) => c.Key!));
      token = r.NextContinuationToken;
      pages++;
    } while (token);
    assert.equal(pages, 3);
    assert.equal(keys.length, 2500);
    assert.deepEqual(keys, [...keys].sort());
    assert.equal(new Set(keys).size, 2500);
    const top = await s3.send(new ListObjectsV2Command({ Bucket: 'Other', Delimiter: '/' }));
    assert.deepEqual(
      top.CommonPrefixes?.map((p) => p.Prefix),
      ['empty/', 'many/'],
    );
    const flat = await s3.send(new ListObjectsV2Command({ Bucket: 'Other', StartAfter: 'many/k02498.txt' }));
    assert.deepEqual(
      flat.Contents?.map((c) => c.Key),
      ['many/k02499.txt'],
    );
    const marker = await s3.send(new ListObjectsV2Command({ Bucket: 'Other', Prefix: 'em' }));
    assert.deepEqual(
      marker.Contents?.map((c) => c.Key),
      ['empty/'],
      'an empty folder shows as a marker',
    );
  });

  test('DeleteObjects: quiet answers only errors; CopyObject across buckets', async () => {
    for (const k of ['d/a.txt', 'd/b.txt', 'd/c.txt']) await s3.send(new PutObjectCommand({ Bucket: 'Box', Key: k, Body: k }));
    const loud = await s3.send(new DeleteObjectsCommand({ Bucket: 'Box', Delete: { Objects: [{ Key: 'd/a.txt' }] } }));
    assert.deepEqual(
      loud.Deleted?.map((d) => d.Key),
      ['d/a.txt'],
    );
    const quiet = await s3.send(new DeleteObjectsCommand({ Bucket: 'Box', Delete: { Quiet: true, Objects: [{ Key: 'd/b.txt' }, { Key: 'd/../x' }] } }));
    assert.equal(quiet.Deleted ?? undefined, undefined);
    assert.deepEqual(
      quiet.Errors?.map((x) => [x.Key, x.Code]),
      [['d/../x', 'InvalidObjectName']],
    );
    assert.ok(!existsSync(join(e.root, 'd/a.txt')) && !existsSync(join(e.root, 'd/b.txt')) && existsSync(join(e.root, 'd/c.txt')));
    const copy = await s3.send(new CopyObjectCommand({ Bucket: 'Other', Key: 'copied/c.txt', CopySource: 'Box/d/c.txt' }));
    assert.ok(copy.CopyObjectResult?.ETag);
    assert.equal(readFileSync(join(other, 'copied/c.txt'), 'utf8'), 'd/c.txt');
  });

  test('aws-chunked with per-chunk signatures: stored when every chunk verifies; nothing published when one does not', async () => {
    const chunks = [Buffer.alloc(70_000, 'a'), Buffer.alloc(1000, 'b')];
    const headers = { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '71000' };
    const before = uploaded.length;
    const good = await signed(e, e.creds, {
      method: 'PUT',
      path: '/Box/chunked.bin',
      headers,
      payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      body: (seed, key, amz) => chunked(chunks, seed, key, amz),
    });
    assert.equal(good.status, 200, good.text);
    assert.deepEqual(readFileSync(join(e.root, 'chunked.bin')), Buffer.concat(chunks));
    const bad = await signed(e, e.creds, {
      method: 'PUT',
      path: '/Box/chunked-bad.bin',
      headers,
      payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      body: (seed, key, amz) => chunked(chunks, seed, key, amz, 1),
    });
    assert.equal(bad.status, 403);
    assert.match(bad.text, /SignatureDoesNotMatch/);
    assert.equal(existsSync(join(e.root, 'chunked-bad.bin')), false);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      uploaded.slice(before).map((x) => x.node.path ?? x.node.name),
      [uploaded[before].node.path ?? uploaded[before].node.name],
    );
  });

  test('a signed payload hash that does not match the body: refused, nothing published, nothing announced', async () => {
    const before = uploaded.length;
    const body = Buffer.from('the real bytes');
    const r = await signed(e, e.creds, { method: 'PUT', path: '/Box/lie.txt', payloadHash: createHash('sha256').update('other bytes').digest('hex'), body });
    assert.equal(r.status, 400);
    assert.match(r.text, /XAmzContentSHA256Mismatch/);
    assert.equal(existsSync(join(e.root, 'lie.txt')), false);
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(uploaded.length, before);
  });

  test('traversal in every key form is refused and touches nothing outside the storage', async () => {
    for (const path of ['/Box/../escape.txt', '/Box/a/%2e%2e/%2e%2e/escape.txt', '/Box/a%5C..%5Cescape.txt', '/Box/a%00b.txt', '/Box/a/../../escape.txt']) {
      const r = await signed(e, e.creds, { method: 'PUT', path, payloadHash: 'UNSIGNED-PAYLOAD', body: Buffer.from('x') });
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.match(r.text, /InvalidObjectName/, path);
    }
    assert.equal(existsSync(join(e.root, '..', 'escape.txt')), false);
  });

  test('XML bombs and oversized bodies are MalformedXML', async () => {
    const bomb = Buffer.from(
      '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><Delete><Object><Key>&b;</Key></Object></Delete>',
    );
    const r = await signed(e, e.creds, { method: 'POST', path: '/Box?delete', payloadHash: 'UNSIGNED-PAYLOAD', body: bomb });
    assert.equal(r.status, 400);
    assert.match(r.text, /MalformedXML/);
    const huge = Buffer.alloc(3 * 1024 * 1024, ' ');
    const big = await signed(e, e.creds, { method: 'POST', path: '/Box?delete', payloadHash: 'UNSIGNED-PAYLOAD', body: huge });
    assert.match(big.text, /MalformedXML/);
  });

  test("multipart: parts listed, completed with S3's ETag; wrong ETag, small part, another key and abort refused", async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'Box', Key: 'mp/obj.bin' }));
    const p1 = Buffer.alloc(5 * 1024 * 1024, 'p');
    const p2 = Buffer.from('tail');
    const e1 = (await s3.send(new UploadPartCommand({ Bucket: 'Box', Key: 'mp/obj.bin', UploadId, PartNumber: 1, Body: p1 }))).ETag!;
    const e2 = (await s3.send(new UploadPartCommand({ Bucket: 'Box', Key: 'mp/obj.bin', UploadId, PartNumber: 2, Body: p2 }))).ETag!;
    assert.equal(e1, `"${createHash('md5').update(p1).digest('hex')}"`);
    const parts = await s3.send(new ListPartsCommand({ Bucket: 'Box', Key: 'mp/obj.bin', UploadId }));
    assert.deepEqual(
      parts.Parts?.map((p) => [p.PartNumber, p.Size]),
      [
        [1, p1.length],
        [2, 4],
      ],
    );
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'Box' }));
    assert.deepEqual(
      uploads.Uploads?.map((u) => u.Key),
      ['mp/obj.bin'],
    );
    const stranger = e.sdk(await e.key(e.admin, { verbs: ['files:read', 'files:write'], name: 'stranger' }));
    assert.equal((await err(stranger.send(new ListPartsCommand({ Bucket: 'Box', Key: 'mp/obj.bin', UploadId })))).name, 'NoSuchUpload');
    const wrong = await err(
      s3.send(
        new CompleteMultipartUploadCommand({ Bucket: 'Box', Key: 'mp/obj.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"00"' }] } }),
      ),
    );
    assert.equal(wrong.name, 'InvalidPart');
    const missing = await err(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'Box',
          Key: 'mp/obj.bin',
          UploadId,
          MultipartUpload: {
            Parts: [
              { PartNumber: 1, ETag: e1 },
              { PartNumber: 3, ETag: e2 },
            ],
          },
        }),
      ),
    );
    assert.equal(missing.name, 'InvalidPart', 'a part never uploaded');
    assert.equal(existsSync(join(e.root, 'mp/obj.bin')), false, 'nothing published by a refused completion');
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'Box',
        Key: 'mp/obj.bin',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: e1 },
            { PartNumber: 2, ETag: e2 },
          ],
        },
      }),
    );
    const md5s = Buffer.concat([p1, p2].map((b) => createHash('md5').update(b).digest()));
    assert.equal(done.ETag, `"${createHash('md5').update(md5s).digest('hex')}-2"`);
    assert.deepEqual(readFileSync(join(e.root, 'mp/obj.bin')), Buffer.concat([p1, p2]));
    const second = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'Box', Key: 'mp/two.bin' }));
    await s3.send(new UploadPartCommand({ Bucket: 'Box', Key: 'mp/two.bin', UploadId: second.UploadId, PartNumber: 1, Body: Buffer.from('tiny') }));
    await s3.send(new UploadPartCommand({ Bucket: 'Box', Key: 'mp/two.bin', UploadId: second.UploadId, PartNumber: 2, Body: Buffer.from('tiny') }));
    const again = await s3.send(
      new UploadPartCommand({ Bucket: 'Box', Key: 'mp/two.bin', UploadId: second.UploadId, PartNumber: 2, Body: Buffer.from('TINY!') }),
    );
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'Box', Key: 'mp/two.bin', UploadId: second.UploadId }));
    assert.deepEqual(
      listed.Parts?.map((p) => [p.PartNumber, p.Size, p.ETag]),
      [
        [1, 4, `"${createHash('md5').update('tiny').digest('hex')}"`],
        [2, 5, again.ETag],
      ],
      'a part sent again replaces it',
    );
    const tooSmall = await err(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'Box',
          Key: 'mp/two.bin',
          UploadId: second.UploadId,
          MultipartUpload: {
            Parts: [
              { PartNumber: 1, ETag: `"${createHash('md5').update('tiny').digest('hex')}"` },
              { PartNumber: 2, ETag: again.ETag },
            ],
          },
        }),
      ),
    );
    assert.equal(tooSmall.name, 'EntityTooSmall');
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'Box', Key: 'mp/two.bin', UploadId: second.UploadId }));
    assert.equal((await err(s3.send(new ListPartsCommand({ Bucket: 'Box', Key: 'mp/two.bin', UploadId: second.UploadId })))).name, 'NoSuchUpload');
  });

  test('replay: a completed signed write sent again is refused; a failed one may be retried as it was', async () => {
    const amz = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const put = () => signed(e, e.creds, { method: 'PUT', path: '/Box/replay.txt', payloadHash: 'UNSIGNED-PAYLOAD', body: Buffer.from('first'), amz });
    assert.equal((await put()).status, 200);
    writeFileSync(join(e.root, 'replay.txt'), 'changed since');
    const again = await put();
    assert.equal(again.status, 403);
    assert.match(again.text, /AccessDenied[\s\S]*replay/);
    assert.equal(readFileSync(join(e.root, 'replay.txt'), 'utf8'), 'changed since', 'the replay wrote nothing');
    const del = () => signed(e, e.creds, { method: 'DELETE', path: '/Nope/x.txt', payloadHash: 'UNSIGNED-PAYLOAD', amz });
    assert.equal((await del()).status, 404);
    assert.equal((await del()).status, 404, 'a refused request is not remembered: the retry gets the real answer');
  });
});
