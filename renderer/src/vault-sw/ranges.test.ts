import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHUNK_BYTES, HEADER_BYTES, TAG_BYTES } from '../vault/crypto/padding';
import { chunkOf, chunkOffset, parseRange, sliceOfChunk } from './ranges';

test('a plaintext offset maps to its chunk past the 8-byte size prefix', () => {
  assert.equal(chunkOf(0), 0);
  assert.equal(chunkOf(CHUNK_BYTES - 9), 0);
  assert.equal(chunkOf(CHUNK_BYTES - 8), 1);
  assert.equal(chunkOffset(0), HEADER_BYTES);
  assert.equal(chunkOffset(3), HEADER_BYTES + 3 * (CHUNK_BYTES + TAG_BYTES));
});

test('the slice of a chunk a range covers', () => {
  assert.deepEqual(sliceOfChunk(0, 0, 99), { start: 8, end: 108 });
  assert.deepEqual(sliceOfChunk(1, 0, 10 * CHUNK_BYTES), { start: 0, end: CHUNK_BYTES });
  assert.deepEqual(sliceOfChunk(1, CHUNK_BYTES, CHUNK_BYTES + 1), { start: 8, end: 10 });
});

test('Range headers: whole, open, suffix, clipped, outside', () => {
  assert.equal(parseRange(null, 100), null);
  assert.equal(parseRange('bytes=-', 100), null);
  assert.equal(parseRange('bytes=0-9,20-29', 100), null);
  assert.deepEqual(parseRange('bytes=0-', 100), { start: 0, end: 99 });
  assert.deepEqual(parseRange('bytes=10-2000', 100), { start: 10, end: 99 });
  assert.deepEqual(parseRange('bytes=-30', 100), { start: 70, end: 99 });
  assert.deepEqual(parseRange('bytes=-300', 100), { start: 0, end: 99 });
  assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=9-3', 100), 'unsatisfiable');
});
