import { test } from 'node:test';
import assert from 'node:assert/strict';
import { visibleWindow, scrollToReveal, columnsFor } from './virtual';

test('window over 100,000 rows renders only the rows in view plus overscan', () => {
  const layout = { count: 100_000, rowHeight: 36, columns: 1 };
  const w = visibleWindow(layout, 36 * 50_000, 720, 4);
  assert.equal(w.total, 3_600_000);
  assert.equal(w.start, 49_996);
  assert.equal(w.end, 50_024);
  assert.equal(w.offset, 49_996 * 36);
  assert.ok(w.end - w.start < 40);
});

test('window clamps at both ends and handles grids and empty lists', () => {
  const layout = { count: 10, rowHeight: 100, columns: 3 };
  assert.deepEqual(visibleWindow(layout, -50, 250, 0), { start: 0, end: 9, offset: 0, total: 400 });
  assert.deepEqual(visibleWindow(layout, 10_000, 250, 0), { start: 3, end: 10, offset: 100, total: 400 });
  assert.deepEqual(visibleWindow({ count: 0, rowHeight: 36, columns: 1 }, 0, 500), { start: 0, end: 0, offset: 0, total: 0 });
  assert.equal(columnsFor(1000, 160), 6);
  assert.equal(columnsFor(100, 160), 1);
});

test('reveal scrolls only when the focused row leaves the viewport', () => {
  const layout = { count: 1000, rowHeight: 40, columns: 1 };
  assert.equal(scrollToReveal(layout, 5, 0, 400), null);
  assert.equal(scrollToReveal(layout, 10, 0, 400), 40);
  assert.equal(scrollToReveal(layout, 2, 200, 400), 80);
  assert.equal(scrollToReveal({ count: 100, rowHeight: 50, columns: 4 }, 41, 0, 200), 350);
});
