import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BufferPool } from './pool';

test('a buffer given back (or a view of it) is taken again; foreign buffers and second gives are ignored; idle ones are bounded', () => {
  const pool = new BufferPool(1024, 2);
  const a = pool.take();
  assert.equal(a.length, 1024);
  pool.give(a.subarray(0, 10));
  pool.give(a);
  pool.give(Buffer.alloc(1024));
  assert.equal(pool.take(), a, 'the view led back to the buffer');
  assert.notEqual(pool.take(), a, 'given back once, taken once');
  const [x, y, z] = [pool.take(), pool.take(), pool.take()];
  for (const b of [x, y, z]) pool.give(b);
  const again = new Set([pool.take(), pool.take(), pool.take()]);
  assert.equal([x, y, z].filter((b) => again.has(b)).length, 2, 'at most two idle buffers kept');
});
