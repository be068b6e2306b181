import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWriteStream, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Readable, PassThrough } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { zipBytes } from '../../test/helpers/zip-read';
import { ZipWriter } from './zip-writer';
import { needTool, tempDir } from '../../test/helpers/tools';

const skip = needTool('unzip', 'unzip') ?? false;

test('stored, deflated, folders, unknown sizes (ZIP64 records) and UTF-8 names read back with unzip and yauzl', { skip }, async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'out.zip');
    const text = Buffer.from('hello zip\n'.repeat(10_000));
    const noise = randomBytes(300_000);
    const zip = new ZipWriter(createWriteStream(file));
    void zip.addDir('folder'); // not awaited on purpose: calls queue up in order
    await zip.addFile('folder/text.txt', Readable.from([text]), { size: text.length, mtime: new Date('2024-05-06T07:08:10Z'), compress: true });
    await zip.addFile('noise.bin', Readable.from([noise.subarray(0, 100_000), noise.subarray(100_000)]), { mtime: Date.now(), compress: false });
    await zip.addFile('ünïcode name.txt', Readable.from([Buffer.from('x')]), { size: 1, mtime: Date.now(), compress: true });
    await zip.addFile('empty.txt', Readable.from([]), { size: 0, mtime: Date.now(), compress: false });
    const size = await zip.finish();
    assert.equal(size, readFileSync(file).length);
    assert.ok(size < noise.length + text.length / 10, 'the text was compressed');
    const tested = execFileSync('unzip', ['-t', file], { encoding: 'utf8' });
    assert.match(tested, /No errors detected/);
    const got = await zipBytes(file);
    assert.deepEqual([...got.keys()].sort(), ['empty.txt', 'folder/', 'folder/text.txt', 'noise.bin', 'ünïcode name.txt']);
    assert.ok(got.get('folder/text.txt')!.equals(text));
    assert.ok(got.get('noise.bin')!.equals(noise));
    assert.equal(got.get('empty.txt')!.length, 0);
  } finally {
    cleanup();
  }
});

test('backpressure: a slow output is never overrun; the signal cancels; bad names are refused', async () => {
  const out = new PassThrough({ highWaterMark: 16 * 1024 });
  let maxBuffered = 0;
  const zip = new ZipWriter(out);
  const big = randomBytes(4 * 1024 * 1024);
  const writing = zip.addFile('big.bin', Readable.from([big]), { size: big.length, mtime: Date.now(), compress: false });
  let total = 0;
  for await (const c of out) {
    total += (c as Buffer).length;
    maxBuffered = Math.max(maxBuffered, out.writableLength);
    await new Promise((r) => setImmediate(r));
    if (total >= big.length) break;
  }
  await writing;
  assert.ok(maxBuffered <= big.length, `buffered ${maxBuffered}`);

  const ac = new AbortController();
  const z2 = new ZipWriter(new PassThrough().resume(), { signal: ac.signal });
  ac.abort();
  await assert.rejects(z2.addFile('a.txt', Readable.from([Buffer.from('a')]), { mtime: 0, compress: true }), (e: { code?: string }) => e.code === 'cancelled');
  const z3 = new ZipWriter(new PassThrough().resume());
  for (const bad of ['../x', '/abs', 'a\\b', 'a/../b'])
    await assert.rejects(new ZipWriter(new PassThrough().resume()).addFile(bad, Readable.from([]), { mtime: 0, compress: false }), /not a relative entry name/);
  await z3.finish();
});
