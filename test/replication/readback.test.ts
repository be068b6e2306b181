/**
 * The read-back content check against a real local folder: a large file's
 * random windows and tail, kept as its bytes stream past in uneven chunks,
 * match the copy; one changed byte in the tail, or anywhere in a small file
 * (read back whole), is found at its window.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalDriver } from '../../server/storage/drivers/local';
import { LocalRoot } from '../../server/storage/drivers/local/local.root';
import { ReadbackSample, WHOLE_READBACK_BYTES } from '../../server/replication/readback';
import { tempDir } from '../helpers/tools';

/** Streams `bytes` past `sample` in chunks of uneven sizes, as a copy would. */
function streamPast(sample: ReadbackSample, bytes: Buffer): void {
  for (let at = 0, n = 1; at < bytes.length; n = ((n * 7 + 13) % 300_000) + 1) {
    const chunk = bytes.subarray(at, at + n);
    sample.see(chunk, at);
    at += chunk.length;
  }
}

test('read-back windows: a faithful copy matches; a changed byte is found (tail of a large file, anywhere in a small one)', async () => {
  const { dir, cleanup } = tempDir('filedock-readback-');
  try {
    const d = new LocalDriver(await LocalRoot.open(dir));
    const signal = new AbortController().signal;
    const big = randomBytes(5 * 1024 * 1024 + 17);
    writeFileSync(join(dir, 'big.bin'), big);
    const sample = new ReadbackSample(big.length);
    streamPast(sample, big);
    assert.equal(await sample.mismatch(d, 'big.bin', signal), null);
    const copy = readFileSync(join(dir, 'big.bin'));
    copy[copy.length - 1] ^= 1;
    writeFileSync(join(dir, 'big.bin'), copy);
    assert.equal(await sample.mismatch(d, 'big.bin', signal), big.length - 64 * 1024, 'the tail window differs');

    const small = randomBytes(WHOLE_READBACK_BYTES - 3);
    const smallSample = new ReadbackSample(small.length);
    streamPast(smallSample, small);
    const bad = Buffer.from(small);
    bad[123_457] ^= 0x80;
    writeFileSync(join(dir, 'small.bin'), bad);
    assert.equal(await smallSample.mismatch(d, 'small.bin', signal), 0, 'read back whole');
    writeFileSync(join(dir, 'small.bin'), small);
    assert.equal(await smallSample.mismatch(d, 'small.bin', signal), null);
  } finally {
    cleanup();
  }
});
