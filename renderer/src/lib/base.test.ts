import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, withBase, withoutBase } from './base';

test('no base (no page meta): paths unchanged', () => {
  assert.equal(BASE, '');
  assert.equal(withBase('/api/auth/me'), '/api/auth/me');
  assert.equal(withoutBase('/files/Docs'), '/files/Docs');
});

test('a tenant prefix: same-origin paths gain it, routes lose it', () => {
  const b = '/t/acme';
  assert.equal(withBase('/api/auth/me', b), '/t/acme/api/auth/me');
  assert.equal(withBase('https://elsewhere.example/x', b), 'https://elsewhere.example/x');
  assert.equal(withBase('//cdn.example/x', b), '//cdn.example/x');
  assert.equal(withoutBase('/t/acme/files/Docs', b), '/files/Docs');
  assert.equal(withoutBase('/t/acme', b), '/');
  assert.equal(withoutBase('/t/acmeish/files', b), '/t/acmeish/files');
});

test('withBase leaves a path already under the base as it is (a URL may pass through it twice)', () => {
  const b = '/t/acme';
  assert.equal(withBase('/t/acme/api/files/raw?path=x', b), '/t/acme/api/files/raw?path=x');
  assert.equal(withBase('/t/acme', b), '/t/acme');
  assert.equal(withBase('/t/acmeco/x', b), '/t/acme/t/acmeco/x');
});
