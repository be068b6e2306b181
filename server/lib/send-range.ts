/**
 * Writes a byte range of a local file to an HTTP response through pooled
 * buffers, for every door that serves local files (the HTTP routes through
 * http/send-local.ts, the protocol gateways directly). A larger range
 * alternates two pooled 1 MiB buffers (read into one while the other is
 * being written, reuse a buffer only after the socket took it).
 *
 * Why pooled: plain streams allocate a fresh buffer per chunk, and in a
 * process of this size the garbage collection that external allocation
 * triggers halves large-file throughput (~1.0 GB/s → ~2 GB/s).
 */
import { close, open, read } from 'node:fs';
import type { ServerResponse } from 'node:http';

export const CHUNK = 1 << 20;

/** A send budget (lib/egress): read in chunks of `chunk` bytes, each spent before it is written. */
export interface Pacing {
  chunk: number;
  spend(n: number): Promise<void> | undefined;
}
const MIN_CLASS = 1 << 12;
/** Idle bytes the pool keeps, per size class (a 1 MiB class holds 8 buffers). */
const CLASS_BYTES = 8 << 20;

/**
 * Free lists of buffers by power-of-two size (4 KiB .. 1 MiB), each bounded
 * to CLASS_BYTES of idle buffers: after a burst, the surplus is left to the
 * garbage collector, so memory returns toward its idle level.
 */
class BufferPool {
  private free = new Map<number, Buffer[]>();

  /** A buffer of at least `n` bytes (at most CHUNK); give it back with `put` when no one reads it any more. */
  take(n: number): Buffer {
    let size = MIN_CLASS;
    while (size < n) size <<= 1;
    return this.free.get(size)?.pop() ?? Buffer.allocUnsafeSlow(size);
  }

  put(buf: Buffer): void {
    const list = this.free.get(buf.length) ?? this.free.set(buf.length, []).get(buf.length)!;
    if ((list.length + 1) * buf.length <= CLASS_BYTES) list.push(buf);
  }

  /** Idle bytes held (for the status route and the bound test). */
  get idleBytes(): number {
    let n = 0;
    for (const [size, list] of this.free) n += size * list.length;
    return n;
  }
}

export const sendPool = new BufferPool();

export const openRead = (path: string) => new Promise<number>((resolve, reject) => open(path, 'r', (err, fd) => (err ? reject(err) : resolve(fd))));
export const readAt = (fd: number, buf: Buffer, n: number, pos: number) =>
  new Promise<number>((resolve, reject) => read(fd, buf, 0, n, pos, (err, bytes) => (err ? reject(err) : resolve(bytes))));
const closeFd = (fd: number) => new Promise<void>((resolve) => close(fd, () => resolve()));

/**
 * Writes bytes `start..end` (inclusive) of `path`; resolves when done, rejects
 * when the client left or a read failed. `sent.bytes` counts what reached the socket.
 */
export async function sendLocalRange(res: ServerResponse, path: string, start: number, end: number, sent = { bytes: 0 }, pace?: Pacing): Promise<void> {
  const fd = await openRead(path);
  const length = end - start + 1;
  const chunk = pace ? Math.min(CHUNK, pace.chunk) : CHUNK;
  const bufs = [sendPool.take(Math.min(chunk, length))];
  if (length > chunk) bufs.push(sendPool.take(chunk));
  const size = Math.min(bufs[0].length, chunk);
  // A buffer goes back to the pool only once the socket is done with it (or the response is gone).
  let inFlight = 0;
  let finished = false;
  const release = () => {
    if (finished && inFlight === 0) for (const b of bufs) sendPool.put(b);
  };
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) => {
      if (res.destroyed) return reject(new Error('client closed'));
      inFlight++;
      res.write(chunk, (err) => {
        inFlight--;
        release();
        if (err) reject(err);
        else resolve();
      });
    });
  let pending: Promise<void> = Promise.resolve();
  try {
    let pos = start;
    for (let i = 0; pos <= end; i = (i + 1) % bufs.length) {
      const want = Math.min(size, end - pos + 1);
      const got = await readAt(fd, bufs[i], want, pos);
      if (got === 0) throw new Error('file shrank while being sent');
      // Under a budget the bytes wait for their tokens (undefined: granted at once, no promise).
      const granted = pace?.spend(got);
      if (granted) await granted;
      // The other buffer's write must be flushed before we touch it on the next turn.
      await pending;
      pending = write(got === bufs[i].length ? bufs[i] : bufs[i].subarray(0, got)).then(() => void (sent.bytes += got));
      pending.catch(() => undefined); // awaited on the next turn; a client that left meanwhile is not an unhandled rejection
      pos += got;
    }
    await pending;
  } finally {
    finished = true;
    release();
    await closeFd(fd);
  }
}
