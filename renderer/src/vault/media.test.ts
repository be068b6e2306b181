import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mimeOfName, thumbSize } from './media';

test('a decrypted name gives the type its preview needs; SVG and unknown names stay opaque', () => {
  assert.equal(mimeOfName('Photo.JPG'), 'image/jpeg');
  assert.equal(mimeOfName('report.pdf'), 'application/pdf');
  assert.equal(mimeOfName('clip.webm'), 'video/webm');
  assert.equal(mimeOfName('drawing.svg'), 'application/octet-stream');
  assert.equal(mimeOfName('README'), 'application/octet-stream');
});

test('thumbnails fit 256 px on the longer side, never upscaled, never 0', () => {
  assert.deepEqual(thumbSize(4000, 3000, 256), { w: 256, h: 192 });
  assert.deepEqual(thumbSize(300, 1200, 256), { w: 64, h: 256 });
  assert.deepEqual(thumbSize(100, 50, 256), { w: 100, h: 50 });
  assert.deepEqual(thumbSize(10000, 1, 256), { w: 256, h: 1 });
});
