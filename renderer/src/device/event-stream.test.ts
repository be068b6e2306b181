import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFrames } from './event-stream';

test('frames: named events, multi-line data, comments and CRLF; an unfinished frame stays in the buffer', () => {
  const { frames, rest } = parseFrames(': hello\n\nevent: change\ndata: {"a":1}\n\ndata: one\r\ndata: two\r\n\r\nevent: op\ndata: {"op"');
  assert.deepEqual(frames, [
    { type: 'change', data: '{"a":1}' },
    { type: 'message', data: 'one\ntwo' },
  ]);
  assert.equal(rest, 'event: op\ndata: {"op"');
  assert.deepEqual(parseFrames(rest + ':1}\n\n').frames, [{ type: 'op', data: '{"op":1}' }]);
});
