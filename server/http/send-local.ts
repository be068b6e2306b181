/**
 * Streams a byte range of a local file to a Koa response. A range up to one
 * chunk is read once into a pooled buffer sized to it and goes out with the
 * headers in one write (4 KiB GETs must not pay for 2 MiB of allocation: a
 * third of their CPU was the GC); larger ranges go through the pooled
 * double-buffered sender of lib/send-range.ts. Node has no sendfile for
 * sockets, so a copy through user space stays; the callback `fs` calls skip
 * the FileHandle machinery, which costs more than the read itself for a
 * small file.
 */
import { close } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import { CHUNK, openRead, readAt, sendLocalRange, sendPool, type Pacing } from '../lib/send-range';
import type { Ctx } from './context';

export { sendLocalRange, sendPool } from '../lib/send-range';

/**
 * Sends a local file range as the whole response (Koa steps aside; the status
 * and headers already set on `ctx` go out first, with the first bytes).
 * `file`: the contained real path, a descriptor of it that the send takes
 * over (and closes), or its bytes (a small file kept in memory). Resolves
 * with the bytes that left; never throws (a failed send destroys the response).
 */
export async function sendLocal(ctx: Ctx, file: string | number | Buffer, start: number, end: number): Promise<number> {
  // A public transfer from the internet spends the uplink budget chunk by chunk (lib/egress).
  const pace = ctx.state?.egress?.sender() ?? undefined;
  ctx.respond = false;
  // Koa's ctx.set already put every header on the response: writeHead needs only the status.
  ctx.res.writeHead(ctx.status);
  const sent = { bytes: 0 };
  try {
    if (Buffer.isBuffer(file)) return await sendBytes(ctx.res, file.subarray(start, end + 1), pace);
    if (!pace && end >= start && end - start < CHUNK) return await sendSmall(ctx.res, file, start, end - start + 1);
    if (end >= start) await sendLocalRange(ctx.res, file, start, end, sent, pace);
    else if (typeof file === 'number') close(file, () => undefined); // an empty file: nothing to read
    ctx.res.end();
  } catch {
    ctx.res.destroy();
  } finally {
    pace?.done();
  }
  return sent.bytes;
}

/** Bytes in memory as the whole body, under a budget once its tokens for every chunk were granted. */
async function sendBytes(res: ServerResponse, bytes: Buffer, pace?: Pacing): Promise<number> {
  for (let at = 0; pace && at < bytes.length; at += pace.chunk) {
    const granted = pace.spend(Math.min(pace.chunk, bytes.length - at));
    if (granted) await granted;
  }
  return new Promise((resolve, reject) => {
    if (res.destroyed) return reject(new Error('client closed'));
    finished(res, (err) => (err ? reject(err) : resolve(bytes.length)));
    res.end(bytes);
  });
}

/**
 * A range of one chunk at most: one read into a pooled buffer, the file closed
 * without waiting, and the bytes handed to `end` with the headers (the common
 * case of photo grids and sync tools: every saved call counts at 10k req/s).
 * Resolves with the bytes sent; rejects when the read failed or the client left.
 */
async function sendSmall(res: ServerResponse, file: string | number, start: number, length: number): Promise<number> {
  const fd = typeof file === 'number' ? file : await openRead(file);
  const buf = sendPool.take(length);
  let got: number;
  try {
    got = await readAt(fd, buf, length, start);
  } catch (e) {
    sendPool.put(buf);
    throw e;
  } finally {
    close(fd, () => undefined);
  }
  if (got < length) {
    sendPool.put(buf);
    throw new Error('file shrank while being sent');
  }
  return new Promise((resolve, reject) => {
    if (res.destroyed) return (sendPool.put(buf), reject(new Error('client closed')));
    // Settles on 'finish' (the socket took the bytes: the buffer may serve again) or on a premature
    // close (the buffer is left to the collector: the socket may still hold it).
    finished(res, (err) => {
      if (err) return (sendPool.drop(buf), reject(err));
      sendPool.put(buf);
      resolve(got);
    });
    res.end(got === buf.length ? buf : buf.subarray(0, got));
  });
}
