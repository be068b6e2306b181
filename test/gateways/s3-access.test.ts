/**
 * The S3 gateway refuses in S3's words what the file service refuses: a
 * read-only key, a key confined to a folder (outside it), a viewer account,
 * a read-only storage. A client gone mid-PUT leaves no object and no event.
 * A renamed storage is a renamed bucket at once; its uid works as the name.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { startTestServer } from '../helpers/server';
import { signed, startS3Env, type S3Env } from './s3-setup';

const err = (p: Promise<unknown>) =>
  p.then(
    () => assert.fail('expected a refusal'),
    (e) => e as { name: string; $metadata: { httpStatusCode: number } },
  );

describe('S3 gateway access', () => {
  let e: S3Env;
  let boxId: number;
  before(async () => {
    e = await startS3Env();
    await e.sdk().send(new PutObjectCommand({ Bucket: 'Box', Key: 'docs/sub/in.txt', Body: 'inside' }));
    await e.sdk().send(new PutObjectCommand({ Bucket: 'Box', Key: 'docs/out.txt', Body: 'outside' }));
    boxId = (await e.s.api('GET', '/api/admin/storages', { token: e.admin })).body.storages.find((x: any) => x.name === 'Box').id;
  });
  after(async () => {
    await e?.close();
  });

  test('a read-only key reads but may not write or delete: AccessDenied', async () => {
    const ro = e.sdk(await e.key(e.admin, { verbs: ['files:read'], name: 'ro' }));
    assert.equal(await (await ro.send(new GetObjectCommand({ Bucket: 'Box', Key: 'docs/out.txt' }))).Body!.transformToString(), 'outside');
    const put = await err(ro.send(new PutObjectCommand({ Bucket: 'Box', Key: 'docs/new.txt', Body: 'x' })));
    assert.deepEqual([put.name, put.$metadata.httpStatusCode], ['AccessDenied', 403]);
    assert.equal(existsSync(join(e.root, 'docs/new.txt')), false);
    // A large body refused before it is read: the answer comes at once and the client's next request is served.
    const big = await err(ro.send(new PutObjectCommand({ Bucket: 'Box', Key: 'docs/big.bin', Body: Buffer.alloc(8 * 1024 * 1024, 'b') })));
    assert.equal(big.name, 'AccessDenied');
    for (let i = 0; i < 3; i++)
      assert.equal(await (await ro.send(new GetObjectCommand({ Bucket: 'Box', Key: 'docs/out.txt' }))).Body!.transformToString(), 'outside');
  });

  test('a key confined to a folder: the way down and what is below; AccessDenied outside', async () => {
    const c = e.sdk(await e.key(e.admin, { verbs: ['files:read', 'files:write'], root: '/Box/docs/sub', name: 'confined' }));
    const all = await c.send(new ListObjectsV2Command({ Bucket: 'Box' }));
    assert.deepEqual(
      all.Contents?.map((x) => x.Key),
      ['docs/sub/in.txt'],
      'only below the root',
    );
    const top = await c.send(new ListObjectsV2Command({ Bucket: 'Box', Prefix: 'docs/', Delimiter: '/' }));
    assert.deepEqual([top.Contents ?? [], top.CommonPrefixes?.map((p) => p.Prefix)], [[], ['docs/sub/']], 'the way down shows only the next folder');
    const out = await err(c.send(new GetObjectCommand({ Bucket: 'Box', Key: 'docs/out.txt' })));
    assert.deepEqual([out.name, out.$metadata.httpStatusCode], ['AccessDenied', 403]);
    const outPut = await err(c.send(new PutObjectCommand({ Bucket: 'Box', Key: 'docs/x.txt', Body: 'x' })));
    assert.equal(outPut.name, 'AccessDenied');
    await c.send(new PutObjectCommand({ Bucket: 'Box', Key: 'docs/sub/ok.txt', Body: 'ok' }));
    assert.equal(readFileSync(join(e.root, 'docs/sub/ok.txt'), 'utf8'), 'ok');
  });

  test('a viewer account may read, not write; a read-only storage refuses everyone', async () => {
    await e.s.api('POST', '/api/admin/users', {
      token: e.admin,
      body: { email: 'v@example.test', username: 'v1', password: 'viewer-password-1', role: 'viewer' },
    });
    const viewer = await e.s.login('v@example.test', 'viewer-password-1');
    const v = e.sdk(
      await e.key(viewer, { verbs: ['files:read', 'files:write'], name: 'viewer' }).catch(async () => e.key(viewer, { verbs: ['files:read'], name: 'viewer' })),
    );
    assert.equal(await (await v.send(new GetObjectCommand({ Bucket: 'Box', Key: 'docs/out.txt' }))).Body!.transformToString(), 'outside');
    const put = await err(v.send(new PutObjectCommand({ Bucket: 'Box', Key: 'v.txt', Body: 'x' })));
    assert.equal(put.name, 'AccessDenied');
    await e.s.api('PUT', `/api/admin/storages/${boxId}`, { token: e.admin, body: { read_only: true } });
    const ro = await err(e.sdk().send(new PutObjectCommand({ Bucket: 'Box', Key: 'ro.txt', Body: 'x' })));
    assert.equal(ro.name, 'AccessDenied');
    assert.equal(existsSync(join(e.root, 'ro.txt')), false);
    await e.s.api('PUT', `/api/admin/storages/${boxId}`, { token: e.admin, body: { read_only: false } });
  });

  test('a client gone mid-PUT: no object, no partial file, nothing announced', async () => {
    const events: any[] = [];
    e.s.server.bus.on('file.uploaded', (x) => void events.push(x));
    const body = Buffer.alloc(4 * 1024 * 1024, 'z');
    const r = await signed(e, e.creds, { method: 'PUT', path: '/Box/gone.bin', payloadHash: 'UNSIGNED-PAYLOAD', body, cut: 256 * 1024 });
    assert.equal(r.status, 0);
    await new Promise((res) => setTimeout(res, 500));
    assert.equal(existsSync(join(e.root, 'gone.bin')), false);
    assert.deepEqual(
      readdirSync(e.root).filter((n) => n.includes('gone')),
      [],
      'no temp file left visible',
    );
    assert.equal(events.length, 0);
  });

  test('renaming the storage renames the bucket at once; the uid works as the bucket name', async () => {
    const st = (await e.s.api('GET', `/api/admin/storages/${boxId}`, { token: e.admin })).body;
    const s3 = e.sdk();
    const byUid = await s3.send(new GetObjectCommand({ Bucket: st.uid, Key: 'docs/out.txt' }));
    assert.equal(await byUid.Body!.transformToString(), 'outside');
    await s3.send(new PutObjectCommand({ Bucket: st.uid, Key: 'by-uid.txt', Body: 'uid' }));
    assert.equal(readFileSync(join(e.root, 'by-uid.txt'), 'utf8'), 'uid');
    const renamed = await e.s.api('PUT', `/api/admin/storages/${boxId}`, { token: e.admin, body: { name: 'Crate' } });
    assert.equal(renamed.status, 200);
    assert.deepEqual(
      (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name),
      ['Crate'],
    );
    assert.equal(await (await s3.send(new GetObjectCommand({ Bucket: 'Crate', Key: 'docs/out.txt' }))).Body!.transformToString(), 'outside');
    const old = await err(s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'docs/out.txt' })));
    assert.equal(old.name, 'NoSuchBucket');
    await e.s.api('PUT', `/api/admin/storages/${boxId}`, { token: e.admin, body: { name: 'Box' } });
  });

  test('the admin sees the listener and its clients; a taken port is reported and the service still starts', async () => {
    const g = await e.s.api('GET', '/api/admin/gateways', { token: e.admin });
    assert.equal(g.body.gateways.find((x: any) => x.protocol === 's3').url, e.endpoint);
    assert.ok(g.body.sessions.some((x: any) => x.protocol === 's3' && x.user.includes('key')));
    const taken = await startTestServer({ SERVICE_S3_LISTEN: e.endpoint.replace('http://', '') });
    try {
      const view = taken.server.services.gateways.registry.status().gateways.find((x) => x.protocol === 's3')!;
      assert.equal(view.url, null);
      assert.match(view.error ?? '', /EADDRINUSE/);
    } finally {
      await taken.close();
    }
  });
});

describe('S3 gateway idle connections', () => {
  let e: S3Env;
  before(async () => {
    e = await startS3Env({ SERVICE_HTTP_IDLE_TIMEOUT: '1s' });
  });
  after(async () => {
    await e?.close();
  });

  test('a client that goes silent mid-upload is closed after the idle timeout; nothing is published', async () => {
    const t0 = Date.now();
    const r = await signed(e, e.creds, {
      method: 'PUT',
      path: '/Box/stalled.bin',
      payloadHash: 'UNSIGNED-PAYLOAD',
      body: Buffer.alloc(2 * 1024 * 1024, 's'),
      cut: 64 * 1024,
      stall: true,
    });
    assert.equal(r.status, 0, 'the server closed the connection');
    assert.ok(Date.now() - t0 < 5000);
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(existsSync(join(e.root, 'stalled.bin')), false);
  });
});
