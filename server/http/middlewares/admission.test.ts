import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Admission } from './admission';
import { AppError } from '../../errors';

const tick = () => new Promise((r) => setImmediate(r));
// Waiters' timers are unref'd (in the server, the open sockets keep the process alive): keep the test alive.
const alive = setInterval(() => undefined, 1000);
after(() => clearInterval(alive));

test('beyond max_active requests wait; freed slots go round-robin across callers, not first come', async () => {
  const a = new Admission({ maxActive: 1, maxQueued: 100, maxWaitMs: 5000 });
  await a.acquire('hog'); // running
  const order: string[] = [];
  const waits = [
    ...[1, 2, 3, 4].map((i) => a.acquire('hog').then(() => order.push(`hog${i}`))),
    a.acquire('alice').then(() => order.push('alice')),
    a.acquire('bob').then(() => order.push('bob')),
  ];
  assert.equal(a.stats().queued, 6);
  assert.equal(a.stats().callers_waiting, 3);
  for (let i = 0; i < 6; i++) {
    a.release();
    await tick();
    await tick();
  }
  await Promise.all(waits);
  // The hog queued four before alice and bob arrived, yet they are served after its first one.
  assert.deepEqual(order, ['hog1', 'alice', 'bob', 'hog2', 'hog3', 'hog4']);
});

test('a full queue, a caller over its share, and a wait past the bound answer server_busy with retry_after', async () => {
  const a = new Admission({ maxActive: 1, maxQueued: 40, maxWaitMs: 150 });
  await a.acquire('x');
  // One caller may hold a quarter of the queue (10 here).
  const mine = Array.from({ length: 10 }, () => a.acquire('greedy').catch((e) => e));
  const over = await a.acquire('greedy').catch((e) => e);
  assert.ok(over instanceof AppError && over.code === 'server_busy', String(over));
  assert.equal(over.params.retry_after, 1);
  // Others still get in line until the whole queue is full.
  const others = Array.from({ length: 30 }, (_, i) => a.acquire(`c${i}`).catch((e) => e));
  const full = await a.acquire('late').catch((e) => e);
  assert.equal(full.code, 'server_busy');
  // Nobody frees the slot: every waiter times out with the same answer.
  for (const e of await Promise.all([...mine, ...others])) assert.equal((e as AppError).code, 'server_busy');
  const st = a.stats();
  assert.equal(st.queued, 0);
  assert.equal(st.rejected, 2);
  assert.equal(st.timed_out, 40);
});

test('synchronous heavy work runs in slices: past the slice, the next request waits for the loop to poll', async () => {
  const a = new Admission({ maxActive: 4, maxQueued: 100, maxWaitMs: 5000 });
  const busy = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  // The first request of a slice runs at once and burns 10 ms (more than the 8 ms slice).
  await a.acquire('u');
  busy(10);
  a.release();
  let second = false;
  const p = a.acquire('u').then(() => (second = true));
  await Promise.resolve();
  assert.equal(second, false, 'over the slice: not admitted in the same turn');
  // The next slice (after the loop's poll phase) admits it.
  await p;
  assert.equal(second, true);
  assert.equal(a.stats().admitted, 2);
  a.release();
});
