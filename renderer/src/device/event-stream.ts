/**
 * Server-Sent Events over fetch, for a paired device: EventSource cannot send
 * an Authorization header, so the key could not open the folder stream.
 * Behaves like the part of EventSource the UI uses (`open` and named events,
 * reconnection after 1, 2, 4 … 30 s); a 401 or 403 ends it for good.
 */
import { fetchSigned } from '../api/client';
import { deviceKey } from './device-key';
import { withBase } from '../lib/base';

export interface Frame {
  type: string;
  data: string;
}

/** Splits complete frames off `buffer` (blank-line terminated); `rest` is the unfinished tail. */
export function parseFrames(buffer: string): { frames: Frame[]; rest: string } {
  const frames: Frame[] = [];
  const text = buffer.replace(/\r\n?/g, '\n');
  let start = 0;
  for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n', start)) {
    let type = 'message';
    const data: string[] = [];
    for (const line of text.slice(start, end).split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) frames.push({ type, data: data.join('\n') });
    start = end + 2;
  }
  return { frames, rest: text.slice(start) };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const h = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(h), resolve()), { once: true });
  });

/** An EventSource look-alike whose requests carry the device key; `close()` ends it. */
export function signedEventSource(url: string): Pick<EventSource, 'addEventListener' | 'close'> {
  const target = new EventTarget();
  const ctrl = new AbortController();
  const { signal } = ctrl;
  (async () => {
    for (let delay = 1000; !signal.aborted; delay = Math.min(delay * 2, 30_000)) {
      try {
        const r = await fetchSigned(url, { headers: { Accept: 'text/event-stream' }, cache: 'no-store', signal });
        if (r.status === 401 || r.status === 403) return;
        if (r.ok && r.body) {
          delay = 500;
          target.dispatchEvent(new Event('open'));
          const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
          let buf = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            const { frames, rest } = parseFrames(buf + value);
            buf = rest;
            for (const f of frames) target.dispatchEvent(new MessageEvent(f.type, { data: f.data }));
          }
        }
      } catch {
        // A dropped connection: try again after the delay.
      }
      await sleep(delay, signal);
    }
  })();
  return { addEventListener: target.addEventListener.bind(target) as EventSource['addEventListener'], close: () => ctrl.abort() };
}

/** The event stream at `url`: a paired device has no cookie, so its stream goes over fetch with the key. */
export function openEventStream(url: string): Pick<EventSource, 'addEventListener' | 'close'> {
  // fetchSigned adds the app's base path itself.
  return deviceKey() ? signedEventSource(url) : new EventSource(withBase(url));
}
