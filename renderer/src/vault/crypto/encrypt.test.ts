import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decryptBlob, encryptBlob } from './index';
import { resumeBlob } from './encrypt';
import { concat } from './bytes';
import { pseudoRandom, rejectsWith, ringOf } from './testing';

const MiB = 1 << 20;

test('parts asked for together (8 MiB, four at once, out of order) join into the ciphertext asked for whole, as pieces or as slices', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(30 * MiB + 777, 3);
  const enc = await encryptBlob(new Blob([data]), ring);
  const whole = await enc.slice(0, enc.size);
  const part = 8 * MiB;
  const starts = Array.from({ length: Math.ceil(enc.size / part) }, (_, i) => i * part).reverse();
  const parts = await Promise.all(starts.map((s) => enc.slice(s, s + part)));
  assert.deepEqual(concat(...parts.reverse()), whole);
  const pieces = await Promise.all(starts.map((s) => enc.pieces(s, s + part)));
  assert.deepEqual(concat(...pieces.reverse().flat()), whole);
  // Asked again after other slices (the boundary chunks kept or not): the same bytes.
  assert.deepEqual(await enc.slice(part - 5, part + 5), whole.subarray(part - 5, part + 5));
  assert.deepEqual(new Uint8Array(await (await decryptBlob(new Blob([whole]), ring)).arrayBuffer()), data);
});

test('resumeBlob: the same file under the header of its first encryption gives the same bytes; another ring is refused', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(3 * MiB + 5, 9);
  const first = await encryptBlob(new Blob([data]), ring);
  const again = await resumeBlob(new Blob([data]), ring, first.header);
  assert.equal(again.size, first.size);
  assert.deepEqual(again.contentKey, first.contentKey);
  assert.deepEqual(await again.slice(2 * MiB, again.size), await first.slice(2 * MiB, first.size));
  assert.deepEqual(await again.slice(0, 200), await first.slice(0, 200));
  const other = await ringOf(1);
  await rejectsWith(resumeBlob(new Blob([data]), other, first.header), 'integrity');
});
