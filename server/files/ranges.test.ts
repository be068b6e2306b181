import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRange, ifRangeAllows, notModified, contentDisposition } from './ranges';

test('single, open, suffix and multiple ranges', () => {
  assert.deepEqual(planRange('bytes=0-9', 100), { kind: 'partial', spans: [{ start: 0, end: 9 }] });
  assert.deepEqual(planRange('bytes=90-', 100), { kind: 'partial', spans: [{ start: 90, end: 99 }] });
  assert.deepEqual(planRange('bytes=-5', 100), { kind: 'partial', spans: [{ start: 95, end: 99 }] });
  assert.deepEqual(planRange('bytes=-500', 100), { kind: 'partial', spans: [{ start: 0, end: 99 }] });
  assert.deepEqual(planRange('bytes=95-200', 100), { kind: 'partial', spans: [{ start: 95, end: 99 }] });
  assert.equal((planRange('bytes=0-1, 5-6', 100) as { spans: unknown[] }).spans.length, 2);
});

test('unsatisfiable and ignorable headers', () => {
  assert.deepEqual(planRange('bytes=100-', 100), { kind: 'unsatisfiable' });
  assert.deepEqual(planRange('bytes=-0', 100), { kind: 'unsatisfiable' });
  assert.deepEqual(planRange('bytes=0-0', 0), { kind: 'unsatisfiable' });
  assert.deepEqual(planRange('items=0-1', 100), { kind: 'full' });
  assert.deepEqual(planRange('bytes=5-1', 100), { kind: 'full' });
  assert.deepEqual(planRange('bytes=abc', 100), { kind: 'full' });
  assert.deepEqual(planRange('bytes=' + Array(20).fill('0-1').join(','), 100), { kind: 'full' });
});

test('If-Range, conditional requests and the RFC 5987 file name', () => {
  const mtime = Date.UTC(2026, 0, 2, 3, 4, 5);
  assert.equal(ifRangeAllows('"a-b"', '"a-b"', mtime), true);
  assert.equal(ifRangeAllows('"old"', '"a-b"', mtime), false);
  assert.equal(ifRangeAllows('W/"a-b"', '"a-b"', mtime), false);
  assert.equal(ifRangeAllows(new Date(mtime).toUTCString(), '"a-b"', mtime), true);
  assert.equal(notModified({ ifNoneMatch: 'W/"a-b", "x"' }, '"a-b"', mtime), true);
  assert.equal(notModified({ ifNoneMatch: '"x"', ifModifiedSince: new Date(mtime).toUTCString() }, '"a-b"', mtime), false);
  assert.equal(notModified({ ifModifiedSince: new Date(mtime + 1000).toUTCString() }, '"a-b"', mtime), true);
  assert.equal(
    contentDisposition('rapor şubat "v2".pdf', false),
    `attachment; filename="rapor _ubat _v2_.pdf"; filename*=UTF-8''rapor%20%C5%9Fubat%20%22v2%22.pdf`,
  );
});
