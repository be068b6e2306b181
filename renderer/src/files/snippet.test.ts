import { test } from 'node:test';
import assert from 'node:assert/strict';
import { snippetParts } from './snippet';

test('a snippet splits into text and its marked hits; markup in it stays text', () => {
  assert.deepEqual(snippetParts('…the \uE000wombat\uE001 <b>meeting</b>…'), [
    { text: '…the ', hit: false },
    { text: 'wombat', hit: true },
    { text: ' <b>meeting</b>…', hit: false },
  ]);
  assert.deepEqual(snippetParts('\uE000two\uE001 hits, \uE000both\uE001'), [
    { text: 'two', hit: true },
    { text: ' hits, ', hit: false },
    { text: 'both', hit: true },
  ]);
  assert.deepEqual(snippetParts('no hit marked here'), [{ text: 'no hit marked here', hit: false }]);
  assert.deepEqual(snippetParts('a lone \uE000 start'), [{ text: 'a lone  start', hit: false }]);
});
