/**
 * Multipart in place: parts land at their offsets in one sparse staged file,
 * complete is a rename (fast whatever the size), etags are per put.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createCipheriv } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
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
/** Session folders: in the data dir (`<stateDir>/staging`), the storage being on the same filesystem. */
const staging = () => readdirSync(`${tmp.dir}/staging`);

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
  await assert.rejects(
    mp.complete(
      handle,
      etags.map((etag, i) => ({ part: i + 1, etag })),
    ),
    code('conflict'),
    'superseded etag refused',
  );
  etags[2] = again.etag;

  const t0 = performance.now();
  const entry = await mp.complete(
    handle,
    etags.map((etag, i) => ({ part: i + 1, etag })),
  );
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
  await assert.rejects(
    mp.complete(handle, [
      { part: 1, etag: e1 },
      { part: 2, etag: e2 },
    ]),
    code('conflict'),
    'part 3 missing',
  );
  const e3 = (await mp.putPart(handle, 3, Readable.from([Buffer.from('ij')]), 2)).etag;
  await assert.rejects(
    mp.complete(handle, [
      { part: 1, etag: e1 },
      { part: 2, etag: 'forged' },
      { part: 3, etag: e3 },
    ]),
    code('conflict'),
  );
  await assert.rejects(
    mp.complete(handle, [
      { part: 2, etag: e2 },
      { part: 1, etag: e1 },
      { part: 3, etag: e3 },
    ]),
    code('conflict'),
    'out of order',
  );
  await mp.complete(handle, [
    { part: 1, etag: e1 },
    { part: 2, etag: e2 },
    { part: 3, etag: e3 },
  ]);
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

test("sessions stage in the data dir, never in the user's folder, when the storage shares its filesystem", async () => {
  const { handle } = await mp.init('up/where.bin', { size: 4, partSize: 4 });
  assert.equal(JSON.parse(handle).place, 'data');
  assert.ok(staging().includes(JSON.parse(handle).id));
  assert.equal(existsSync(`${tmp.dir}/root/${STAGING_DIR}`), false);
  assert.deepEqual(readdirSync(`${tmp.dir}/root`).sort(), ['up']);
  await mp.abort(handle);
});

test('a session opened before the data-dir staging (no place in its handle) finishes from the root folder', async () => {
  // What an older build left: the sparse file and its part records under <root>/.service-staging/<id>/.
  const id = 'oldsession-0123456789';
  mkdirSync(`${tmp.dir}/root/${STAGING_DIR}/${id}/parts`, { recursive: true });
  writeFileSync(`${tmp.dir}/root/${STAGING_DIR}/${id}/data`, Buffer.alloc(4));
  const handle = JSON.stringify({ id, path: 'up/old.bin', size: 4, partSize: 4 });
  const { etag } = await mp.putPart(handle, 1, Readable.from([Buffer.from('old!')]), 4);
  await mp.complete(handle, [{ part: 1, etag }]);
  assert.equal(readFileSync(`${tmp.dir}/root/up/old.bin`, 'utf8'), 'old!');
  assert.deepEqual(readdirSync(`${tmp.dir}/root/${STAGING_DIR}`), []);
});

test('on another filesystem the session stays in the hidden staging folder, and the folder is hidden from listings', async (t) => {
  const fs2 = tempDir('filedock-local-mp-fs2-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', fs2.dir], { stdio: 'pipe' });
  } catch (e) {
    fs2.cleanup();
    if (process.env.CI === 'true' || process.env.CI === '1') throw e;
    return t.skip('cannot mount a tmpfs here (run as root)');
  }
  try {
    const other = await localDriver.create({ path: `${fs2.dir}/root` }, { stateDir: tmp.dir, uid: 'other-fs' });
    const { handle } = await other.multipart!.init('x.bin', { size: 3, partSize: 3 });
    assert.equal(JSON.parse(handle).place, 'root');
    assert.deepEqual(readdirSync(`${fs2.dir}/root/${STAGING_DIR}`), [JSON.parse(handle).id]);
    const names: string[] = [];
    for await (const e of other.list('')) names.push(e.name);
    assert.deepEqual(names, [], 'neither the staging folder nor the probe shows');
    const { etag } = await other.multipart!.putPart(handle, 1, Readable.from([Buffer.from('abc')]), 3);
    await other.multipart!.complete(handle, [{ part: 1, etag }]);
    assert.equal(readFileSync(`${fs2.dir}/root/x.bin`, 'utf8'), 'abc');
    await other.close();
  } finally {
    execFileSync('umount', [fs2.dir]);
    fs2.cleanup();
  }
});
