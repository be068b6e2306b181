/**
 * Serving a file's bytes over HTTP, written once for every door (the raw
 * route, share links, later the gateways): validators (ETag, Last-Modified),
 * conditional requests (304, If-Range), byte ranges (one span, or several as
 * multipart/byteranges), HEAD, the local fast path, and presigned redirects.
 * `onSettled` learns how many bytes reached the client, once, whatever
 * happened, which is what download caps are decided on.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors';
import { contentDisposition, ifRangeAllows, notModified, planRange, type OpenFile, type Span } from '../files';
import { randomToken } from '../lib/crypto';
import { byteCounter } from '../lib/streams';
import type { Ctx } from './context';
import { sendLocal } from './send-local';

export interface ServeOptions {
  /** `Content-Disposition: inline` (shown by the browser) or `attachment`. */
  inline: boolean;
  /** Content-Type to send (default: the file's own). */
  type?: string;
  cacheControl: string;
  /** Answer If-None-Match / If-Modified-Since with 304 and honour If-Range. */
  conditional: boolean;
  /** `multi`: any ranges (several as multipart/byteranges); `single`: the first span; `none`: always the whole file. */
  ranges: 'multi' | 'single' | 'none';
  /** Whole-file GETs redirect to a presigned backend URL valid this long, where the storage has one. */
  presignSeconds?: number;
  /** Called once with the bytes that reached the client (0 when the serve failed or was refused before any). */
  onSettled?: (bytesSent: number) => void | Promise<void>;
}

/** Serves `f` as the whole response. Throws (before any byte) `range_not_satisfiable` or the storage's error. */
export async function serveFile(ctx: Ctx, f: OpenFile, o: ServeOptions): Promise<void> {
  let settled = false;
  const settle = async (bytes: number) => {
    if (settled) return;
    settled = true;
    await o.onSettled?.(bytes);
  };
  try {
    await serve(ctx, f, o, settle);
  } catch (e) {
    // A refusal is answered after what it gives back is written (a capped link's slot).
    await settle(0);
    throw e;
  }
}

async function serve(ctx: Ctx, f: OpenFile, o: ServeOptions, settle: (bytes: number) => Promise<void>): Promise<void> {
  const type = o.type ?? f.mime;
  ctx.set({
    ETag: f.etag,
    'Last-Modified': new Date(f.mtime).toUTCString(),
    'Accept-Ranges': o.ranges === 'none' ? 'none' : 'bytes',
    'Content-Disposition': contentDisposition(f.name, o.inline),
    'Cache-Control': o.cacheControl,
    'X-Content-Type-Options': 'nosniff',
  });
  if (
    o.conditional &&
    notModified({ ifNoneMatch: ctx.get('if-none-match') || undefined, ifModifiedSince: ctx.get('if-modified-since') || undefined }, f.etag, f.mtime)
  ) {
    ctx.status = 304;
    return settle(0);
  }
  const rangeAllowed = o.ranges !== 'none' && (!o.conditional || ifRangeAllows(ctx.get('if-range') || undefined, f.etag, f.mtime));
  const plan = rangeAllowed ? planRange(ctx.get('range') || undefined, f.size) : ({ kind: 'full' } as const);
  if (plan.kind === 'unsatisfiable') {
    ctx.set('Content-Range', `bytes */${f.size}`);
    throw new AppError('range_not_satisfiable', { size: f.size });
  }
  const head = ctx.method === 'HEAD';
  if (plan.kind === 'full' && o.presignSeconds && !o.inline && !head) {
    const url = await f.presign({ expiresInSeconds: o.presignSeconds, filename: f.name, mime: type });
    if (url) {
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(url);
      return settle(f.size); // the client fetches from the backend: the download happened as far as we can know
    }
  }
  const spans = plan.kind === 'partial' ? (o.ranges === 'single' ? plan.spans.slice(0, 1) : plan.spans) : null;
  if (spans && spans.length > 1) return sendMulti(ctx, f, spans, type, head, settle);
  const span = spans?.[0];
  ctx.status = span ? 206 : 200;
  ctx.type = type;
  ctx.length = span ? span.end - span.start + 1 : f.size;
  if (span) ctx.set('Content-Range', `bytes ${span.start}-${span.end}/${f.size}`);
  if (head) return settle(0);
  const start = span?.start ?? 0;
  const end = span?.end ?? f.size - 1;
  // A file opened for this send needs no await for its path.
  const local = f.takeLocal?.() ?? (await f.localFile());
  if (typeof local === 'number' || local) return settle(await sendLocal(ctx, local, start, end));
  const abort = new AbortController();
  ctx.res.once('close', () => abort.abort());
  const body = await f.read(span, abort.signal);
  await streamBody(ctx, body, settle);
}

/** Several ranges as one multipart/byteranges body with its exact length. */
async function sendMulti(ctx: Ctx, f: OpenFile, spans: Span[], type: string, head: boolean, settle: (bytes: number) => Promise<void>): Promise<void> {
  const boundary = 'fd' + randomToken(12);
  const part = (s: Span) => `\r\n--${boundary}\r\nContent-Type: ${type}\r\nContent-Range: bytes ${s.start}-${s.end}/${f.size}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  let length = Buffer.byteLength(tail);
  for (const s of spans) length += Buffer.byteLength(part(s)) + (s.end - s.start + 1);
  ctx.status = 206;
  ctx.type = `multipart/byteranges; boundary=${boundary}`;
  ctx.length = length;
  if (head) return settle(0);
  const abort = new AbortController();
  ctx.res.once('close', () => abort.abort());
  async function* parts() {
    for (const s of spans) {
      yield Buffer.from(part(s));
      for await (const chunk of await f.read(s, abort.signal)) yield chunk as Buffer;
    }
    yield Buffer.from(tail);
  }
  await streamBody(ctx, Readable.from(parts(), { objectMode: false }), settle);
}

/**
 * Sends `body` as the response (status and headers already set on `ctx`) and
 * reports the bytes that left to `settle`. Never throws: a source that fails
 * midway or a client that leaves ends the response.
 */
export async function streamBody(ctx: Ctx, body: Readable, settle: (bytes: number) => void | Promise<void>): Promise<void> {
  ctx.respond = false;
  ctx.res.writeHead(ctx.status, ctx.response.headers as Record<string, string>);
  const count = byteCounter();
  try {
    // A public transfer under the uplink budget goes through its pacer (set by the public routes).
    const pacer = ctx.state.egress?.pace();
    if (pacer) await pipeline(body, pacer, count.stage, ctx.res);
    else await pipeline(body, count.stage, ctx.res);
  } catch {
    ctx.res.destroy();
  }
  await settle(count.bytes());
}
