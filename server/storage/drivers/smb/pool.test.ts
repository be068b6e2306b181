import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAppError } from '../../../errors';
import { ProcessPool } from './pool';

test('never more than `size` holders; waiters are served in order as slots free', async () => {
  const pool = new ProcessPool(3);
  const held = await Promise.all([pool.acquire(1000), pool.acquire(1000), pool.acquire(1000)]);
  const order: number[] = [];
  const fourth = pool.acquire(1000).then((r) => (order.push(4), r));
  const fifth = pool.acquire(1000).then((r) => (order.push(5), r));
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, []);
  held[0]();
  held[0](); // a second release of the same slot frees nothing more
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, [4]);
  held[1]();
  (await fourth)();
  (await fifth)();
  held[2]();
});

test('a waiter gives up on its deadline or abort without taking a slot', async () => {
  const pool = new ProcessPool(1);
  const release = await pool.acquire(1000);
  await assert.rejects(pool.acquire(30), (e) => isAppError(e) && e.code === 'storage_unreachable');
  const ac = new AbortController();
  const aborted = pool.acquire(1000, ac.signal);
  ac.abort();
  await assert.rejects(aborted, (e) => isAppError(e) && e.code === 'cancelled');
  release();
  const again = await pool.acquire(50);
  again();
});
