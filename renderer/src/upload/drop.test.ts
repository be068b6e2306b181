import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirsOf } from './drop';

test('folders of a dropped tree come parents first, once each', () => {
  assert.deepEqual(dirsOf(['a/b/c.txt', 'a/d.txt', 'e.txt', 'a/b/f/g.txt']), ['a', 'a/b', 'a/b/f']);
  assert.deepEqual(dirsOf(['x.txt']), []);
});
