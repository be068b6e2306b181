import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encryptBlob } from './index';
import { plainSizeOf, SIZE_HEAD_BYTES } from './plain-size';
import { pseudoRandom, rejectsWith, ringOf } from './testing';

test('plainSizeOf reads the true size from the first 102 bytes, for sizes across bucket edges and chunks', async () => {
  const ring = await ringOf(1);
  for (const size of [0, 1, 4087, 4088, 70_000, (1 << 20) - 8, (1 << 20) + 3, 3_333_333]) {
    const enc = await encryptBlob(new Blob([pseudoRandom(size, size + 2)]), ring);
    assert.equal(await plainSizeOf(await enc.slice(0, SIZE_HEAD_BYTES), enc.size, ring), size, `${size}`);
  }
});

test('plainSizeOf refuses a size outside the bucket, a length no file has, another ring and a short head (integrity)', async () => {
  const ring = await ringOf(1);
  const enc = await encryptBlob(new Blob([pseudoRandom(70_000)]), ring);
  const head = await enc.slice(0, SIZE_HEAD_BYTES);
  const flipped = head.slice();
  flipped[SIZE_HEAD_BYTES - 3] ^= 0x40; // the size's third byte from the end: far outside the bucket
  await rejectsWith(plainSizeOf(flipped, enc.size, ring), 'integrity');
  await rejectsWith(plainSizeOf(head, enc.size + 1, ring), 'integrity');
  await rejectsWith(plainSizeOf(head, enc.size, await ringOf(1)), 'integrity');
  await rejectsWith(plainSizeOf(head.subarray(0, 100), enc.size, ring), 'integrity');
});
