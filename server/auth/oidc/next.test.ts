import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeNext } from './next';

test('local paths are kept (query and fragment too)', () => {
  for (const p of ['/', '/files', '/files/home/a%20b?view=grid', '/links#new', '/admin/users?q=x']) assert.equal(safeNext(p), p);
});

test('anything that could leave this host lands on /', () => {
  const bad = [
    '',
    'files',
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '\\/evil.example',
    'https://evil.example',
    'http:/evil.example',
    'javascript:alert(1)',
    'data:text/html,x',
    '/\t/evil.example',
    '/\n/evil.example',
    '/\r\n//evil.example',
    '/a\x00b',
    '/' + 'a'.repeat(2048),
    undefined,
    null,
    42,
    ['/files'],
  ];
  for (const p of bad) assert.equal(safeNext(p), '/', JSON.stringify(p));
});

test('dot segments are resolved, never escaping the origin', () => {
  assert.equal(safeNext('/files/../admin'), '/admin');
  // Their normal form would be `//evil.example`.
  for (const p of ['/..//evil.example', '/.//evil.example', '/a/..//evil.example', '/%2e%2e//evil.example']) assert.equal(safeNext(p), '/', p);
});
