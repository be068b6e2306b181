/**
 * How a request refused while its body is still arriving gets its answer to
 * the client. Closing the socket on unread bytes makes the kernel send a
 * reset, and a client still sending then meets EPIPE/ECONNRESET instead of
 * the error envelope. So the rest of the body is read and thrown away up to
 * `bound` bytes before answering (the connection stays reusable); past the
 * bound the answer says `Connection: close`, and once it is written the
 * socket is half-closed and read away until the client closes its side, as
 * nginx's lingering close does (at most LINGER_MS, LINGER_IDLE_MS without a
 * byte), so the envelope is never lost to a reset.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Ctx } from './context';

/** The longest a refused connection is read away after its answer, and the longest pause in it. */
const LINGER_MS = 30_000;
const LINGER_IDLE_MS = 5_000;

/**
 * Reads away what is left of `ctx.req`'s body, up to `bound` bytes, and
 * resolves when it ended (or the client left); past the bound it resolves at
 * once with the answer set to close its connection after the envelope.
 * Call it before throwing the refusal.
 */
export async function drainRefused(ctx: Ctx, bound: number): Promise<void> {
  const req = ctx.req;
  if (req.readableEnded || req.destroyed || !hasBody(req)) return;
  req.unpipe();
  const within = await new Promise<boolean>((resolve) => {
    let n = 0;
    const done = (ok: boolean) => {
      req.off('data', onData).off('end', onEnd).off('close', onEnd);
      resolve(ok);
    };
    const onData = (chunk: Buffer) => {
      n += chunk.length;
      if (n > bound) done(false);
    };
    const onEnd = () => done(true);
    req.on('data', onData).once('end', onEnd).once('close', onEnd);
    req.resume();
  });
  if (within) {
    // A route may have asked for a close when it gave the body up; the body is whole now, the connection reusable.
    ctx.remove('Connection');
    return;
  }
  req.resume(); // keeps flowing with no reader: the bytes are thrown away while the answer is written
  ctx.set('Connection', 'close');
  lingerOnClose(req.socket);
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Node ends an answered `Connection: close` socket with destroySoon(): FIN, then a destroy that resets a
 * client still sending. This socket's destroySoon half-closes instead and destroys once the client closed
 * its side, or after the linger bounds.
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    const stop = () => {
      clearTimeout(total);
      this.destroy();
    };
    const total = setTimeout(stop, LINGER_MS);
    total.unref();
    this.setTimeout(LINGER_IDLE_MS, stop);
    this.once('end', stop).once('close', () => clearTimeout(total));
    this.end();
    this.resume();
  };
}
