/**
 * Multipart in place: parts land at their offsets in one sparse staged file,
 * complete is a rename (fast whatever the size), etags are per put.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createCipheriv } from 'node:crypto';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { isAppError, type ErrorCode } from '../../../errors';
import { STAGING_DIR } from '../../../lib/paths';
import { tempDir } from '../../../../test/helpers/tools';
import { localDriver } from '.';
import type { MultipartCapability, StorageDriver } from '../../types';

const MiB = 1024 * 1024;
const code = (c: ErrorCode) => (e: unknown) => isAppError(e) && e.code === c;

/** Deterministic bytes of part `n` (AES-CTR keystream), produced without holding the whole file. */
const partBytes = (n: number, size: number): Buffer => {
  const c = createCipheriv('aes-128-ctr', Buffer.alloc(16, 7), Buffer.alloc(16, n));
  return c.update(Buffer.alloc(size));
};

let tmp: ReturnType<typeof tempDir>;
let d: StorageDriver;
let mp: MultipartCapability;
const staging = () => readdirSync(`${tmp.dir}/root/${STAGING_DIR}`);

before(async () => {
  tmp = tempDir('filedock-local-mp-');
  d = await localDriver.create({ path: `${tmp.dir}/root` }, { stateDir: tmp.dir, uid: 'mp' });
  mp = d.multipart!;
  await d.mkdir('up');
});
after(async () => {
  await d.close();
  tmp.cleanup();
});

test('a 100 MiB upload in 8 MiB parts sent out of order publishes in place', async () => {
  const size = 100 * MiB;
  const partSize = 8 * MiB;
  const count = Math.ceil(size / partSize);
  const { handle } = await mp.init('up/big.bin', { size, partSize });
  await assert.rejects(d.stat('up/big.bin'), code('not_found'), 'nothing visible before complete');
  const etags: string[] = [];
  const order = Array.from({ length: count }, (_, i) => count - i); // last part first
  const expected = createHash('sha256');
  for (const n of order) {
    const len = Math.min(partSize, size - (n - 1) * partSize);
    etags[n - 1] = (await mp.putPart(handle, n, Readable.from([partBytes(n, len)]), len)).etag;
  }
  for (let n = 1; n <= count; n++) expected.update(partBytes(n, Math.min(partSize, size - (n - 1) * partSize)));
  // Re-sending a part is idempotent for the bytes and yields a new etag.
  const again = await mp.putPart(handle, 3, Readable.from([partBytes(3, partSize)]), partSize);
  assert.notEqual(again.etag, etags[2]);
  await assert.rejects(mp.complete(handle, etags.map((etag, i) => ({ part: i + 1, etag }))), code('conflict'), 'superseded etag refused');
  etags[2] = again.etag;

  const t0 = performance.now();
  const entry = await mp.complete(handle, etags.map((etag, i) => ({ part: i + 1, etag })));
  const ms = performance.now() - t0;
  assert.ok(ms < 500, `complete took ${ms.toFixed(0)} ms`);
  assert.equal(entry.size, size);
  assert.deepEqual(staging(), [], 'staged session is gone');
  const actual = createHash('sha256');
  for await (const c of createReadStream(`${tmp.dir}/root/up/big.bin`)) actual.update(c as Buffer);
  assert.equal(actual.digest('hex'), expected.digest('hex'));
  await assert.rejects(mp.putPart(handle, 1, Readable.from([partBytes(1, partSize)]), partSize), code('not_found'), 'finished session');
});

test('wrong etags, wrong part sizes and missing parts are refused', async () => {
  const { handle } = await mp.init('up/small.bin', { size: 10, partSize: 4 });
  const e1 = (await mp.putPart(handle, 1, Readable.from([Buffer.from('abcd')]), 4)).etag;
  const e2 = (await mp.putPart(handle, 2, Readable.from([Buffer.from('efgh')]), 4)).etag;
  await assert.rejects(mp.putPart(handle, 3, Readable.from([Buffer.from('ijk')]), 3), code('bad_body'), 'last part is 2 bytes');
  await assert.rejects(mp.putPart(handle, 3, Readable.from([Buffer.from('ijk')]), 2), code('bad_body'), 'body longer than declared');
  await assert.rejects(mp.complete(handle, [{ part: 1, etag: e1 }, { part: 2, etag: e2 }]), code('conflict'), 'part 3 missing');
  const e3 = (await mp.putPart(handle, 3, Readable.from([Buffer.from('ij')]), 2)).etag;
  await assert.rejects(mp.complete(handle, [{ part: 1, etag: e1 }, { part: 2, etag: 'forged' }, { part: 3, etag: e3 }]), code('conflict'));
  await assert.rejects(mp.complete(handle, [{ part: 2, etag: e2 }, { part: 1, etag: e1 }, { part: 3, etag: e3 }]), code('conflict'), 'out of order');
  await mp.complete(handle, [{ part: 1, etag: e1 }, { part: 2, etag: e2 }, { part: 3, etag: e3 }]);
  const chunks: Buffer[] = [];
  for await (const c of await d.read('up/small.bin')) chunks.push(c as Buffer);
  assert.equal(Buffer.concat(chunks).toString(), 'abcdefghij');
});

test('abort cleans the staged data and is idempotent; a handle survives as JSON', async () => {
  const before = staging().length;
  const { handle } = await mp.init('up/aborted.bin', { size: 8, partSize: 8 });
  const revived = JSON.parse(JSON.stringify({ handle })).handle as string;
  await mp.putPart(revived, 1, Readable.from([Buffer.from('12345678')]), 8);
  assert.equal(staging().length, before + 1);
  await mp.abort(revived);
  await mp.abort(revived);
  assert.equal(staging().length, before);
  assert.equal(existsSync(`${tmp.dir}/root/up/aborted.bin`), false);
  await assert.rejects(mp.putPart(handle, 1, Readable.from([Buffer.from('12345678')]), 8), code('not_found'));
  await assert.rejects(mp.init('nope/x.bin', { size: 1, partSize: 1 }), code('not_found'), 'missing target folder');
  await assert.rejects(mp.complete('{"id":"../../etc","path":"x","size":1,"partSize":1}', []), code('bad_id'));
});

test('the staging folder is hidden from listings', async () => {
  await mp.init('up/hidden.bin', { size: 1, partSize: 1 });
  const names: string[] = [];
  for await (const e of d.list('')) names.push(e.name);
  assert.equal(names.includes(STAGING_DIR), false);
});
