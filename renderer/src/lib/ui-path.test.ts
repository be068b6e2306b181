import { test } from 'node:test';
import assert from 'node:assert/strict';
import { joinPath, parentPath, baseName, crumbs, isInside, routeOf, uiPathOfRoute, storageOf, toSharePath, fromSharePath } from './ui-path';
import { formatBytes, extOf } from './format';

test('UI paths join, split and round-trip through routes', () => {
  assert.equal(joinPath('/', 'home'), '/home');
  assert.equal(joinPath('/home/a/', 'b'), '/home/a/b');
  assert.equal(parentPath('/home/a/b'), '/home/a');
  assert.equal(parentPath('/home'), '/');
  assert.equal(baseName('/home/a b.txt'), 'a b.txt');
  assert.deepEqual(crumbs('/s/x'), [
    { name: 's', path: '/s' },
    { name: 'x', path: '/s/x' },
  ]);
  assert.ok(isInside('/s/a/b', '/s/a'));
  assert.ok(!isInside('/s/ab', '/s/a'));
  assert.equal(storageOf('/s/a'), 's');
  assert.equal(storageOf('/'), null);
  const p = '/my store/50% #1/ü?.txt';
  assert.equal(routeOf(p), '/files/my%20store/50%25%20%231/%C3%BC%3F.txt');
  assert.equal(uiPathOfRoute(routeOf(p)), p);
  assert.equal(uiPathOfRoute('/files'), '/');
  assert.equal(toSharePath('/home/a/b.txt'), 'home://a/b.txt');
  assert.equal(toSharePath('/home'), 'home://');
  assert.equal(fromSharePath('home://a/b.txt'), '/home/a/b.txt');
  assert.equal(fromSharePath('home://'), '/home');
});

test('sizes and extensions', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1536), '1.5 KB');
  assert.equal(formatBytes(50 * 1024 * 1024), '50 MB');
  assert.equal(extOf('a.TAR.GZ'), 'gz');
  assert.equal(extOf('.bashrc'), '');
});
