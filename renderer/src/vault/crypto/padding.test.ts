import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cipherSize, HEADER_BYTES, paddedSize } from './index';
import { paddedOfCipher } from './padding';

const MiB = 2 ** 20;

test('padding: at least size + 8, at least 4096, at most 1.12× above 1 MiB, monotonic', () => {
  assert.equal(paddedSize(0), 4096);
  assert.equal(paddedSize(4088), 4096);
  assert.ok(paddedSize(4089) > 4096);
  const sizes = [0, 1, 100, 4087, 4088, 4089, 5000, 65535, MiB - 8, MiB - 7, MiB, 3 * MiB + 1, 1e9 + 7, 10 * 2 ** 30, 2 ** 45 + 3];
  for (let k = 0; k < 2000; k++) sizes.push(Math.floor(Math.random() ** 3 * 2 ** 36));
  sizes.sort((a, b) => a - b);
  let previous = 0;
  for (const size of sizes) {
    const p = paddedSize(size);
    assert.ok(p >= size + 8 && p >= 4096, `${size} -> ${p}`);
    if (size >= MiB) assert.ok(p <= 1.12 * size, `${size} -> ${p}: overhead ${(p / size).toFixed(4)}`);
    assert.ok(p >= previous, `monotonic at ${size}`);
    assert.equal(paddedSize(p - 8), p, `a padded length is its own bucket (${size})`);
    previous = p;
  }
});

test('padding leaks few sizes: all files of 1.0 to 1.1 MiB share a handful of buckets', () => {
  const buckets = new Set<number>();
  for (let size = MiB; size < 1.1 * MiB; size += 97) buckets.add(paddedSize(size));
  assert.ok(buckets.size <= 4, `${buckets.size} buckets`);
});

test('cipherSize: header, padded stream, a tag per MiB chunk; and back from a ciphertext length', () => {
  assert.equal(cipherSize(0), HEADER_BYTES + 4096 + 16);
  assert.equal(cipherSize(MiB - 8), HEADER_BYTES + MiB + 16);
  assert.equal(cipherSize(MiB - 7), HEADER_BYTES + paddedSize(MiB - 7) + 32);
  for (const size of [0, 5000, MiB - 8, MiB, 7 * MiB + 5, 10 * 2 ** 30]) {
    assert.equal(paddedOfCipher(cipherSize(size)), paddedSize(size), `${size}`);
  }
  for (const total of [0, HEADER_BYTES + 4096, HEADER_BYTES + 4096 + 15, cipherSize(5000) + 1, cipherSize(5000) - 1, 2 ** 60, -1, 0.5]) {
    assert.equal(paddedOfCipher(total), null, `${total}`);
  }
});
