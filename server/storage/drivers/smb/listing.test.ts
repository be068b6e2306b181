import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseListing, parseRecursive, parseRow } from './listing';
import { findStatus } from './errors';

// Rows as smbclient 4.17 prints them: the name column is padded in bytes.
const row = (name: string, attrs: string, size: number, when = 'Sat Nov 21 09:38:14 2026') => {
  const pad = Math.max(0, 30 - Buffer.byteLength(name));
  return `  ${name}${' '.repeat(pad)}${attrs.padStart(7)} ${String(size).padStart(8)}  ${when}`;
};

test('a row with spaces and accents in the name keeps the name whole', () => {
  assert.deepEqual(parseRow(row('x é  b.txt', 'A', 12)), {
    name: 'x é  b.txt',
    type: 'file',
    size: 12,
    mtime: Date.UTC(2026, 10, 21, 9, 38, 14),
  });
});

test('a long name ending in letters is not confused with the attribute column', () => {
  const name = 'a very long file name that ends in DA';
  assert.equal(parseRow(row(name, 'A', 3))?.name, name);
  assert.equal(parseRow(row('N', 'N', 0))?.name, 'N');
});

test('folders have size 0; dot entries, totals and blank lines are skipped', () => {
  const out = [
    row('.', 'D', 0),
    row('..', 'D', 0),
    row('sub dir', 'D', 4096),
    row('big', 'AH', 123456789012),
    '',
    '\t\t264212084 blocks of size 1024. 81928352 blocks available',
  ].join('\n');
  assert.deepEqual(
    parseListing(out).map((e) => [e.name, e.type, e.size]),
    [
      ['sub dir', 'dir', 0],
      ['big', 'file', 123456789012],
    ],
  );
});

test('a single-digit day of month parses', () => {
  assert.equal(parseRow(row('f', 'A', 1, 'Mon Mar  2 01:02:03 2026'))?.mtime, Date.UTC(2026, 2, 2, 1, 2, 3));
});

test('recursive listings attach each row to its folder header', () => {
  const out = [row('a b', 'D', 0), '', '\\a b', row('x.txt', 'A', 1), '', '\\a b\\c', row('y', 'A', 2)].join('\n');
  assert.deepEqual(
    parseRecursive(out).map((r) => `${r.dir}|${r.entry.name}`),
    ['|a b', 'a b|x.txt', 'a b/c|y'],
  );
});

test('statuses are read from message lines only, never from listing rows or headers', () => {
  assert.equal(findStatus(`${row('NT_STATUS_FAKE', 'A', 1)}\n\\NT_STATUS_DIR\n`), null);
  assert.equal(findStatus('session setup failed: NT_STATUS_LOGON_FAILURE\n'), 'NT_STATUS_LOGON_FAILURE');
  assert.equal(findStatus('do_connect: Connection to 127.0.0.1 failed (Error NT_STATUS_CONNECTION_REFUSED)'), 'NT_STATUS_CONNECTION_REFUSED');
});
