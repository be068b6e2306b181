/**
 * Stream plumbing every layer uses, so that no stream is ever joined with a
 * bare `.pipe()` (whose errors, left unheard, end the process).
 */
import { pipeline, Readable, Transform, type Writable } from 'node:stream';

/**
 * Joins `source` to `dest` with `stream.pipeline` (a failure on either side
 * destroys both) and returns `dest`. `onSourceError` runs at most once, only
 * for a failure of the source itself (a client gone, a read error), never for
 * the error pipeline carries back to the source after `dest` failed or was
 * closed early, so callers can report the source's own failure over the
 * broken write it causes. Every error is handled: none reaches the process.
 */
export function pipeFrom<T extends Writable>(source: Readable, dest: T, onSourceError?: (e: Error) => void): T {
  let destGone = false;
  // A socket or pipe emits 'close' only once its handle is closed, after pipeline has already
  // destroyed the source: its 'error' is the earlier sign (both run before the source's error).
  const gone = () => (destGone = true);
  dest.once('error', gone);
  dest.once('close', gone);
  source.once('error', (e) => {
    if (!destGone) onSourceError?.(e);
  });
  pipeline(source, dest, () => undefined);
  return dest;
}

/**
 * Lets go of a stream nobody will read (a write refused before it began):
 * destroys it, and hears any error it still raises (a file stream that opens
 * late, a socket that fails) so none reaches the process.
 */
export function discard(s: Readable): void {
  s.on('error', () => undefined);
  s.destroy();
}

/**
 * The `count` bytes of `body` after its first `skip` bytes (`count` may be
 * Infinity), as a new stream. Stops reading and destroys `body` as soon as
 * the slice is complete (the surplus is never downloaded); an error of
 * `body` fails the returned stream; destroying the returned stream destroys
 * `body`.
 */
export function takeBytes(body: Readable, skip: number, count: number): Readable {
  async function* slice(): AsyncGenerator<Buffer> {
    let toSkip = skip;
    let left = count;
    if (left <= 0) return;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      let c = chunk;
      if (toSkip > 0) {
        const n = Math.min(toSkip, c.length);
        toSkip -= n;
        c = c.subarray(n);
      }
      if (c.length === 0) continue;
      const out = c.length > left ? c.subarray(0, left) : c;
      left -= out.length;
      yield out;
      // Leaving the loop destroys `body`.
      if (left <= 0) return;
    }
  }
  return Readable.from(slice(), { objectMode: false });
}

/** A pass-through stage that counts the bytes through it (what reached the next stage). */
export function byteCounter(): { stage: Transform; bytes: () => number } {
  let n = 0;
  const stage = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      cb(null, chunk);
    },
  });
  return { stage, bytes: () => n };
}

/**
 * `body` failed with `tooLong()` as soon as more than `max` bytes came through it (so an oversize body is
 * never written whole); an error of `body` fails the returned stream too.
 */
export function capBytes(body: Readable, max: number, tooLong: () => Error): Readable {
  let n = 0;
  const stage = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      cb(n > max ? tooLong() : null, chunk);
    },
  });
  return pipeFrom(body, stage);
}
