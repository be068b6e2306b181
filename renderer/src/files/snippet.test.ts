import { test } from 'node:test';
import assert from 'node:assert/strict';
import { snippetParts } from './snippet';

test('a snippet splits around its marked hit; markup in it stays text', () => {
  assert.deepEqual(snippetParts('…the \uE000wombat\uE001 <b>meeting</b>…'), { before: '…the ', hit: 'wombat', after: ' <b>meeting</b>…' });
  assert.deepEqual(snippetParts('no hit marked here'), { before: 'no hit marked here', hit: '', after: '' });
  assert.deepEqual(snippetParts('a lone \uE000 start'), { before: 'a lone  start', hit: '', after: '' });
});
