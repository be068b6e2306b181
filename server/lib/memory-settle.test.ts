import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemorySettle } from './memory-settle';

test('memory given up outside the heap (send buffers of downloads that ended) starts one collection once the service is quiet', async (t) => {
  let released = 0;
  const settle = new MemorySettle(() => {
    const n = released;
    released = 0;
    return n;
  });
  t.after(() => settle.stop());
  // 100 slow readers that left: ~200 MB of buffers only a collection returns, with no request since.
  released = 200 << 20;
  for (const end = Date.now() + 30_000; settle.settled === 0; await new Promise((r) => setTimeout(r, 100))) {
    assert.ok(Date.now() < end, 'no collection within 30 s of a quiet service');
  }
  assert.equal(settle.settled, 1);
});
