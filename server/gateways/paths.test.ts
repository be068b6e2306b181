import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitLast, treePath } from './paths';

test('gateway paths: resolved against a working folder without climbing above /, or refused', () => {
  const r = (raw: string, cwd?: string) => treePath(raw, { cwd, dots: 'resolve' });
  assert.equal(r('/Photos/2024/a.jpg'), '/Photos/2024/a.jpg');
  assert.equal(r('a.jpg', '/Photos/2024'), '/Photos/2024/a.jpg');
  assert.equal(r('../2023/./b.jpg', '/Photos/2024'), '/Photos/2023/b.jpg');
  assert.equal(r('../../../../etc/passwd', '/Photos'), '/etc/passwd', 'clamped at the virtual root: "etc" is then a storage name');
  assert.equal(r('//Photos///x/'), '/Photos/x');
  assert.equal(r(''), '/');
  assert.equal(r('..'), '/');
  const f = (raw: string) => treePath(raw, { dots: 'refuse' });
  assert.equal(f('/Photos/./a'), '/Photos/a');
  for (const bad of ['/Photos/../x', '/..', '../x', 'a\\..\\b', '/a\0b'])
    assert.throws(
      () => f(bad),
      (e: { code?: string }) => e.code === 'bad_path',
      bad,
    );
  assert.throws(
    () => r('a\\b'),
    (e: { code?: string }) => e.code === 'bad_path',
  );
  assert.deepEqual(splitLast('/Photos/2024/a.jpg'), { parent: '/Photos/2024', name: 'a.jpg' });
  assert.deepEqual(splitLast('/Photos'), { parent: '/', name: 'Photos' });
});
