/**
 * Serving a shared file to a stranger: the download slot is claimed before
 * anything is sent and given back when the serve fails before its first
 * byte; once a byte has left, an abandoned transfer keeps its slot. Active
 * content (HTML, SVG, XML, scripts) is never rendered inline: `inline=1` is
 * honoured only for passive types, and every file carries a sandboxing CSP so
 * nothing served through a link runs in this origin.
 */
import type { Readable } from 'node:stream';
import { contentDisposition, planRange } from '../../files';
import { mimeOf } from '../../catalogue';
import { AppError } from '../../errors';
import type { SharesService, ShareRow } from '../../shares';
import type { Entry, StorageDriver } from '../../storage';
import type { Ctx } from '../context';
import { publicHeaders } from './page';
import { sendLocal } from '../send-local';

const PASSIVE_INLINE = /^(image\/(png|jpeg|gif|webp|avif|bmp)|video\/[\w.+-]+|audio\/[\w.+-]+|application\/pdf|text\/plain)$/;
/** No script, no plugin, no form: a shared file can show itself and nothing more. */
const SANDBOX = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";
/** Presigned URLs for link downloads are short: the link's own checks already ran. */
const PRESIGN_SECONDS = 300;

/** Whether `mime` may be shown inline; everything else is served as an attachment. */
export const inlineAllowed = (mime: string): boolean => PASSIVE_INLINE.test(mime);

export interface ServeFile {
  share: ShareRow;
  driver: StorageDriver;
  rel: string;
  name: string;
  entry: Entry;
  inline: boolean;
}

/** Claims a slot and sends one file of a share (redirects to a presigned URL where the storage has one). */
export async function sendSharedFile(ctx: Ctx, shares: SharesService, f: ServeFile): Promise<void> {
  const mime = f.entry.mime || mimeOf(f.name);
  const inline = f.inline && inlineAllowed(mime);
  await shares.claimDownload(f.share);
  let body: Readable;
  const capped = f.share.max_downloads !== null;
  const plan = capped ? ({ kind: 'full' } as const) : planRange(ctx.get('range') || undefined, f.entry.size);
  try {
    if (plan.kind === 'unsatisfiable') {
      ctx.set('Content-Range', `bytes */${f.entry.size}`);
      throw new AppError('range_not_satisfiable', { size: f.entry.size });
    }
    if (f.driver.presignGet && !inline && plan.kind === 'full') {
      const url = await f.driver.presignGet(f.rel, { expiresInSeconds: PRESIGN_SECONDS, filename: f.name, mime });
      publicHeaders(ctx);
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(url);
      return;
    }
    const span = plan.kind === 'partial' ? plan.spans[0] : undefined;
    if (f.driver.localPath) {
      const path = await f.driver.localPath(f.rel);
      ctx.status = span ? 206 : 200;
      ctx.length = span ? span.end - span.start + 1 : f.entry.size;
      if (span) ctx.set('Content-Range', `bytes ${span.start}-${span.end}/${f.entry.size}`);
      fileHeaders(ctx, f.name, inline ? mime : attachmentType(mime), inline);
      ctx.set('Accept-Ranges', capped ? 'none' : 'bytes');
      // A serve that failed before its first byte gives the slot back.
      if ((await sendLocal(ctx, path, span?.start ?? 0, span?.end ?? f.entry.size - 1)) === 0 && f.entry.size > 0) shares.releaseDownload(f.share);
      return;
    }
    const abort = new AbortController();
    ctx.res.once('close', () => abort.abort());
    body = await f.driver.read(f.rel, span, abort.signal);
    ctx.status = span ? 206 : 200;
    ctx.length = span ? span.end - span.start + 1 : f.entry.size;
    if (span) ctx.set('Content-Range', `bytes ${span.start}-${span.end}/${f.entry.size}`);
  } catch (e) {
    shares.releaseDownload(f.share);
    throw e;
  }
  fileHeaders(ctx, f.name, inline ? mime : attachmentType(mime), inline);
  ctx.set('Accept-Ranges', capped ? 'none' : 'bytes');
  sendCounted(ctx, shares, f.share, body);
}

/** Sends a cached archive file (counted like any download). */
export async function sendZipFile(ctx: Ctx, shares: SharesService, share: ShareRow, file: string, size: number, name: string): Promise<void> {
  await shares.claimDownload(share);
  ctx.status = 200;
  ctx.length = size;
  fileHeaders(ctx, name, 'application/zip', false);
  if ((await sendLocal(ctx, file, 0, size - 1)) === 0 && size > 0) shares.releaseDownload(share);
}

/** Headers of a file response: disposition, type, no caching by shared caches, the sandbox CSP (not on PDF, which browsers refuse to show sandboxed). */
export function fileHeaders(ctx: Ctx, name: string, type: string, inline: boolean): void {
  publicHeaders(ctx);
  ctx.type = type;
  ctx.set('Content-Disposition', contentDisposition(name, inline));
  ctx.set('Cache-Control', 'private, no-store');
  if (type !== 'application/pdf') ctx.set('Content-Security-Policy', SANDBOX);
}

/**
 * Hands `body` to Koa and watches it: when the response closes before the
 * source emitted its first chunk (the source failed, or the client went away
 * at once), the slot goes back. `readableDidRead` is read instead of adding
 * a 'data' listener, which would start the flow before Koa pipes the body.
 */
export function sendCounted(ctx: Ctx, shares: SharesService, share: ShareRow, body: Readable): void {
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    if (!body.readableDidRead && !ctx.res.writableFinished) shares.releaseDownload(share);
  };
  body.once('error', settle);
  ctx.res.once('close', settle);
  ctx.body = body;
}

/** Active or unknown types go out as a download of opaque bytes. */
function attachmentType(mime: string): string {
  return /^(text\/html|application\/xhtml|image\/svg|text\/xml|application\/xml|text\/javascript|application\/javascript)/.test(mime) ? 'application/octet-stream' : mime;
}
