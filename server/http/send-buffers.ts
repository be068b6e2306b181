/**
 * Sends a body held in memory as byte pieces, written back to back on a
 * corked response (one `writev` with the headers) with a Content-Length: no
 * stream, no copy into one buffer. Koa sends a stream body through
 * `stream.pipeline`, whose AbortController and DOMException per response cost
 * 3–4 % of a listing's CPU under load (docs/benchmarks.md, issue 38).
 */
import type { Ctx } from './context';

/**
 * Answers `ctx` 200 with `pieces` as the whole body (headers already set on
 * `ctx` go out with them). Koa steps aside; a client that left meanwhile gets
 * nothing.
 */
export function sendBuffers(ctx: Ctx, pieces: Buffer[]): void {
  let length = 0;
  for (const p of pieces) length += p.length;
  ctx.status = 200;
  ctx.length = length;
  ctx.respond = false;
  const res = ctx.res;
  // Koa's ctx.set already put every header on the response: writeHead needs only the status.
  res.writeHead(ctx.status);
  if (res.destroyed) return;
  res.cork();
  for (const p of pieces) res.write(p);
  res.end();
}
