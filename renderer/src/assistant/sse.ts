/**
 * An incremental server-sent events reader for `fetch` bodies (EventSource
 * cannot POST): chunks may split a frame, a line or a UTF-8 character anywhere.
 */
export interface SseEvent {
  event: string;
  data: string;
}

/** Feeds decoded text in; calls `onEvent` for each complete frame (a blank line ends one). */
export function sseParser(onEvent: (e: SseEvent) => void): { push: (text: string) => void; end: () => void } {
  let buf = '';
  let event = '';
  let data: string[] = [];
  const line = (l: string) => {
    if (l === '') {
      if (data.length) onEvent({ event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
    } else if (l.startsWith(':'))
      return; // a comment (keep-alive)
    else {
      const i = l.indexOf(':');
      const field = i < 0 ? l : l.slice(0, i);
      const value = i < 0 ? '' : l.slice(i + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  };
  return {
    push(text) {
      buf += text;
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
        if (buf[nl] === '\r' && nl === buf.length - 1) break;
        const len = buf.startsWith('\r\n', nl) ? 2 : 1;
        line(buf.slice(0, nl));
        buf = buf.slice(nl + len);
      }
    },
    end() {
      if (buf) line(buf);
      line('');
      buf = '';
    },
  };
}

/** Reads a Response body as events, decoding UTF-8 across chunk edges. */
export async function readSse(body: ReadableStream<Uint8Array>, onEvent: (e: SseEvent) => void): Promise<void> {
  const parser = sseParser(onEvent);
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.push(decoder.decode(value, { stream: true }));
  }
  parser.push(decoder.decode());
  parser.end();
}
