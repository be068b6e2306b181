import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache } from './page-cache';

test('the page cache stays within its byte bound, least recently used out first, and never serves a stale page', () => {
  const c = new PageCache<{ bytes: number; n: number }>(1000);
  for (let i = 0; i < 20; i++) c.set(1, 'd', `k${i}`, { bytes: 100, n: i });
  // 20 pages of 100 bytes in a 1,000-byte cache: only the last ten are kept.
  assert.equal(c.get(1, 'd', 'k9'), undefined);
  assert.equal(c.get(1, 'd', 'k10')?.n, 10);
  c.set(1, 'd', 'k20', { bytes: 100, n: 20 }); // k10 was used just now: k11 goes
  assert.equal(c.get(1, 'd', 'k11'), undefined);
  assert.equal(c.get(1, 'd', 'k10')?.n, 10);
  assert.equal(c.get(1, 'd', 'big'), undefined);
  c.set(1, 'd', 'big', { bytes: 300, n: 0 }); // over a quarter of the bound: not kept
  assert.equal(c.get(1, 'd', 'big'), undefined);
  c.changed(1, 'd', false);
  assert.equal(c.get(1, 'd', 'k10'), undefined, 'a change of the folder drops its pages');
  c.set(1, 'e', 'x', { bytes: 10, n: 1 });
  c.changed(1, 'other', true);
  assert.equal(c.get(1, 'e', 'x'), undefined, 'a structural change drops the whole storage');
});
