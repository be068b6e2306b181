import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dispositionName } from './signed-src';

test('the download name comes from Content-Disposition (UTF-8 form first)', () => {
  assert.equal(dispositionName(`attachment; filename="a.zip"; filename*=UTF-8''%C3%A7i%C3%A7ek.zip`), 'çiçek.zip');
  assert.equal(dispositionName('attachment; filename="plain name.txt"'), 'plain name.txt');
  assert.equal(dispositionName('attachment; filename=bare.txt'), 'bare.txt');
  assert.equal(dispositionName("attachment; filename*=UTF-8''%E0%A4%A"), '', 'a broken escape gives no name');
  assert.equal(dispositionName(null), '');
});
