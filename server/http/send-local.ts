/**
 * Streams a byte range of a local file to the response with two reused 1 MiB
 * buffers: read into one while the other is being written, reuse a buffer
 * only after the socket took it. Plain streams allocate a fresh buffer per
 * chunk, and in a process of this size the garbage collection that external
 * allocation triggers halves throughput (measured: ~1.0 GB/s → ~2 GB/s).
 */
import { open } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import type { Ctx } from './context';

const CHUNK = 1 << 20;

/**
 * Writes bytes `start..end` (inclusive) of `path`; resolves when done, rejects
 * when the client left or a read failed. `sent.bytes` counts what reached the socket.
 */
export async function sendLocalRange(res: ServerResponse, path: string, start: number, end: number, sent = { bytes: 0 }): Promise<void> {
  const fh = await open(path, 'r');
  const bufs = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
  let pending: Promise<void> = Promise.resolve();
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) => {
      if (res.destroyed) return reject(new Error('client closed'));
      res.write(chunk, (err) => (err ? reject(err) : resolve()));
    });
  try {
    let pos = start;
    for (let i = 0; pos <= end; i ^= 1) {
      const want = Math.min(CHUNK, end - pos + 1);
      const { bytesRead } = await fh.read(bufs[i], 0, want, pos);
      if (bytesRead === 0) throw new Error('file shrank while being sent');
      // The other buffer's write must be flushed before we touch it on the next turn.
      await pending;
      pending = write(bytesRead === CHUNK ? bufs[i] : bufs[i].subarray(0, bytesRead)).then(() => void (sent.bytes += bytesRead));
      pending.catch(() => undefined); // awaited on the next turn; a client that left meanwhile is not an unhandled rejection
      pos += bytesRead;
    }
    await pending;
  } finally {
    await fh.close();
  }
}

/**
 * Sends a local file range as the whole response (Koa steps aside; the status
 * and headers already set on `ctx` go out first). Resolves with the bytes that
 * left; never throws (a failed send destroys the response).
 */
export async function sendLocal(ctx: Ctx, path: string, start: number, end: number): Promise<number> {
  ctx.respond = false;
  ctx.res.writeHead(ctx.status, ctx.response.headers as Record<string, string>);
  const sent = { bytes: 0 };
  try {
    if (end >= start) await sendLocalRange(ctx.res, path, start, end, sent);
    ctx.res.end();
  } catch {
    ctx.res.destroy();
  }
  return sent.bytes;
}
