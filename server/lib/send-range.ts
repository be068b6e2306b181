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
 * garbage collector, so memory returns toward its idle level. It also counts
 * the bytes out in sends (`heldBytes`, back to 0 once every send has ended)
 * and the bytes it gave up to the collector (the cue for lib/memory-settle).
 */
class BufferPool {
  private free = new Map<number, Buffer[]>();
  private held = 0;
  private released = 0;

  /** A buffer of at least `n` bytes (at most CHUNK); give it back with `put` or `drop` once the send is over. */
  take(n: number): Buffer {
    let size = MIN_CLASS;
    while (size < n) size <<= 1;
    this.held += size;
    return this.free.get(size)?.pop() ?? Buffer.allocUnsafeSlow(size);
  }

  /** A buffer no one reads any more: kept for the next send, or left to the collector when its class is full. */
  put(buf: Buffer): void {
    this.held -= buf.length;
    const list = this.free.get(buf.length) ?? this.free.set(buf.length, []).get(buf.length)!;
    if ((list.length + 1) * buf.length <= CLASS_BYTES) list.push(buf);
    else this.released += buf.length;
  }

  /** A buffer a closed socket may still point at: never handed out again, left to the collector. */
  drop(buf: Buffer): void {
    this.held -= buf.length;
    this.released += buf.length;
  }

  /** Idle bytes held (for the status route and the bound test). */
  get idleBytes(): number {
    let n = 0;
    for (const [size, list] of this.free) n += size * list.length;
    return n;
  }

  /** Bytes taken by sends that have not ended yet. */
  get heldBytes(): number {
    return this.held;
  }

  /** Bytes left to the garbage collector since the last call (reading resets it). */
  takeReleased(): number {
    const n = this.released;
    this.released = 0;
    return n;
  }
}

export const sendPool = new BufferPool();

export const openRead = (path: string) => new Promise<number>((resolve, reject) => open(path, 'r', (err, fd) => (err ? reject(err) : resolve(fd))));
export const readAt = (fd: number, buf: Buffer, n: number, pos: number) =>
  new Promise<number>((resolve, reject) => read(fd, buf, 0, n, pos, (err, bytes) => (err ? reject(err) : resolve(bytes))));
const closeFd = (fd: number) => new Promise<void>((resolve) => close(fd, () => resolve()));

/**
 * Writes bytes `start..end` (inclusive) of `file` (a path, or a descriptor
 * the send takes over and closes); resolves when done, rejects when the
 * client left or a read failed. `sent.bytes` counts what reached the socket.
 */
export async function sendLocalRange(
  res: ServerResponse,
  file: string | number,
  start: number,
  end: number,
  sent = { bytes: 0 },
  pace?: Pacing,
): Promise<void> {
  const fd = typeof file === 'number' ? file : await openRead(file);
  const length = end - start + 1;
  const chunk = pace ? Math.min(CHUNK, pace.chunk) : CHUNK;
  const bufs = [sendPool.take(Math.min(chunk, length))];
  if (length > chunk) bufs.push(sendPool.take(chunk));
  const size = Math.min(bufs[0].length, chunk);
  // A buffer goes back to the pool once the socket is done with it. A write to a socket that closed meanwhile
  // never calls back: 'close' fails the write being waited on (else every download aborted while the socket was
  // full kept its buffers and its descriptor for good) and its buffers go to the collector, not to the next send.
  let inFlight = 0;
  let finished = false;
  let left = false;
  const waiting = new Set<(e: Error) => void>();
  const giveBack = () => {
    if (!finished || (inFlight > 0 && !left) || bufs.length === 0) return;
    for (const b of bufs.splice(0)) left ? sendPool.drop(b) : sendPool.put(b);
    res.off('close', onClose);
  };
  const onClose = () => {
    left = true;
    for (const fail of waiting) fail(new Error('client closed'));
    giveBack();
  };
  res.on('close', onClose);
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) => {
      if (res.destroyed) return reject(new Error('client closed'));
      inFlight++;
      waiting.add(reject);
      res.write(chunk, (err) => {
        inFlight--;
        waiting.delete(reject);
        giveBack();
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
    giveBack();
    await closeFd(fd);
  }
}
