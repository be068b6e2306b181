import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterByName, folderAt, sameName, segments, takenBy } from './vault-paths';

const folders = [
  { id: 1, path: '/home/Secret' },
  { id: 2, path: '/home/Secret2' },
  { id: 3, path: '/other/Vault' },
];

test('folderAt finds the root and anything below it, never a sibling that shares a prefix', () => {
  assert.equal(folderAt(folders, '/home/Secret')?.id, 1);
  assert.equal(folderAt(folders, '/home/Secret/abcd/efgh')?.id, 1);
  assert.equal(folderAt(folders, '/home/Secret2/x')?.id, 2);
  assert.equal(folderAt(folders, '/home/Secretive'), null);
  assert.equal(folderAt(folders, '/home'), null);
  assert.equal(folderAt([], '/home/Secret'), null);
});

test('names compare in NFC: composed and decomposed forms are one name', () => {
  assert.ok(sameName('Ça.txt', 'C\u0327a.txt'));
  assert.ok(!sameName('a.txt', 'A.txt'));
  const rows = [{ name: 'C\u0327a.txt' }, { name: 'x', unreadable: true }];
  assert.equal(takenBy(rows, 'Ça.txt'), rows[0]);
  assert.equal(takenBy(rows, 'x'), undefined, 'an unreadable row holds no name');
});

test('the browser filter matches every word of the decrypted names, case-insensitively', () => {
  const rows = [{ name: 'Tax Return 2026.pdf' }, { name: 'Photo İstanbul.jpg' }, { name: 'tax', unreadable: true }];
  assert.deepEqual(
    filterByName(rows, 'tax 2026').map((r) => r.name),
    ['Tax Return 2026.pdf'],
  );
  assert.deepEqual(
    filterByName(rows, 'photo').map((r) => r.name),
    ['Photo İstanbul.jpg'],
  );
  assert.deepEqual(filterByName(rows, 'nothing'), []);
});

test('segments splits a dropped file’s relative path', () => {
  assert.deepEqual(segments('a/b/c.txt'), ['a', 'b', 'c.txt']);
  assert.deepEqual(segments('/c.txt'), ['c.txt']);
});
