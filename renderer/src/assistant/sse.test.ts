import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSse, sseParser, type SseEvent } from './sse';

const frames =
  'event: conversation\ndata: {"id":"c1"}\n\n: keep-alive\n\nevent: text\ndata: {"delta":"Grüße "}\n\nevent: done\r\ndata: {"reason":"end"}\r\n\r\n';
const want: SseEvent[] = [
  { event: 'conversation', data: '{"id":"c1"}' },
  { event: 'text', data: '{"delta":"Grüße "}' },
  { event: 'done', data: '{"reason":"end"}' },
];

test('frames split at every possible point parse the same', () => {
  for (let i = 0; i <= frames.length; i++) {
    const got: SseEvent[] = [];
    const p = sseParser((e) => got.push(e));
    p.push(frames.slice(0, i));
    p.push(frames.slice(i));
    p.end();
    assert.deepEqual(got, want, `split at ${i}`);
  }
});

test('bytes split inside a UTF-8 character decode whole; a last frame without a blank line still counts', async () => {
  const bytes = new TextEncoder().encode(frames.replace(/\r\n\r\n$/, '\r\n'));
  const at = bytes.indexOf(0xc3) + 1; // inside "ü"
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.slice(0, at));
      c.enqueue(bytes.slice(at));
      c.close();
    },
  });
  const got: SseEvent[] = [];
  await readSse(body, (e) => got.push(e));
  assert.deepEqual(got, want);
});
