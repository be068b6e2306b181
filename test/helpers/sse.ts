/** An SSE stream (`/api/events/stream`) read in the background: every frame with the time it arrived. */
import assert from 'node:assert/strict';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SseFrame {
  event: string;
  data: any;
  at: number;
}

/** Opens the stream at `url` as the holder of `token` and reads it (`readSse`). */
export async function sse(url: string, token: string) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  return readSse(res);
}

/** Reads the frames of an open SSE response until `close()` (or the server ends it). */
export function readSse(res: Response) {
  const frames: SseFrame[] = [];
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const pump = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => null);
      if (!chunk || chunk.done) return;
      buf += dec.decode(chunk.value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data) frames.push({ event, data: JSON.parse(data), at: Date.now() });
      }
    }
  })();
  return {
    frames,
    /** The first frame satisfying `pred`, or undefined after `ms`. */
    async waitFor(pred: (f: SseFrame) => boolean, ms: number) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        const f = frames.find(pred);
        if (f) return f;
        await sleep(10);
      }
      return undefined;
    },
    /** Waits until `want(frames)` holds or `ms` pass, then closes the stream; all frames read. */
    async until(want: (frames: SseFrame[]) => boolean, ms: number) {
      const end = Date.now() + ms;
      while (Date.now() < end && !want(frames)) await sleep(10);
      await this.close();
      return frames;
    },
    async close() {
      await reader.cancel().catch(() => {});
      await pump;
    },
  };
}
