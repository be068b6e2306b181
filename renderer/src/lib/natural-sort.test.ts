import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Entry } from '../api/types';
import { compareNames, entryComparator, insertionIndex } from './natural-sort';

const e = (name: string, type: 'file' | 'dir' = 'file', size = 0, modified = '2026-01-01T00:00:00Z'): Entry => ({ id: 0, name, type, size, modified });

test('names sort naturally and case-insensitively', () => {
  const names = ['file10.txt', 'File2.txt', 'file1.txt', 'a', 'B'];
  assert.deepEqual(names.sort(compareNames), ['a', 'B', 'file1.txt', 'File2.txt', 'file10.txt']);
  assert.notEqual(compareNames('a', 'A'), 0, 'order is total');
});

test('folders come first in both directions; size and date sort with name as tie-break', () => {
  const rows = [e('b', 'file', 5), e('z', 'dir'), e('a', 'file', 5), e('c', 'file', 1)];
  assert.deepEqual(
    [...rows].sort(entryComparator('size', 'asc')).map((r) => r.name),
    ['z', 'c', 'a', 'b'],
  );
  assert.deepEqual(
    [...rows].sort(entryComparator('size', 'desc')).map((r) => r.name),
    ['z', 'b', 'a', 'c'],
  );
  const dated = [e('x', 'file', 0, '2026-03-01T00:00:00Z'), e('y', 'file', 0, '2025-03-01T00:00:00Z')];
  assert.deepEqual(
    dated.sort(entryComparator('modified', 'asc')).map((r) => r.name),
    ['y', 'x'],
  );
});

test('insertion index keeps the list sorted', () => {
  const cmp = entryComparator('name', 'asc');
  const list = [e('d', 'dir'), e('a1'), e('a3'), e('a10')];
  assert.equal(insertionIndex(list, e('a2'), cmp), 2);
  assert.equal(insertionIndex(list, e('c', 'dir'), cmp), 0);
  assert.equal(insertionIndex(list, e('zz'), cmp), 4);
});
