/**
 * Serving a shared file to a stranger. The download slot is claimed (shares
 * service) before anything is sent and settled with the bytes that left.
 * Active content (HTML, SVG, XML, scripts) is never rendered inline:
 * `inline=1` is honoured only for passive types, and every file carries a
 * sandboxing CSP so nothing served through a link runs in this origin.
 */
import { mimeOf } from '../../catalogue';
import { contentDisposition, type OpenFile } from '../../files';
import type { SharesService, ShareRow } from '../../shares';
import type { Ctx } from '../context';
import { serveFile } from '../serve-file';
import { sendLocal } from '../send-local';
import { publicHeaders } from './page';

const PASSIVE_INLINE = /^(image\/(png|jpeg|gif|webp|avif|bmp)|video\/[\w.+-]+|audio\/[\w.+-]+|application\/pdf|text\/plain)$/;
/** No script, no plugin, no form: a shared file can show itself and nothing more. */
const SANDBOX = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";
/** Presigned URLs for link downloads are short: the link's own checks already ran. */
const PRESIGN_SECONDS = 300;

/** Whether `mime` may be shown inline; everything else is served as an attachment. */
export const inlineAllowed = (mime: string): boolean => PASSIVE_INLINE.test(mime);

/**
 * Claims a slot and sends one file of a share (redirects to a presigned URL where the storage has one, except
 * for an encrypted file: its page's script reads the bytes and may fetch from this origin only).
 */
export async function sendSharedFile(ctx: Ctx, shares: SharesService, share: ShareRow, f: OpenFile, inlineAsked: boolean): Promise<void> {
  const mime = f.mime || mimeOf(f.name);
  const inline = inlineAsked && inlineAllowed(mime);
  const slot = await shares.claimDownload(share);
  // A capped link counts whole downloads: no ranges (a range would let one slot fetch the file in pieces).
  const capped = share.max_downloads !== null;
  sandboxHeaders(ctx, inline ? mime : attachmentType(mime));
  await serveFile(ctx, f, {
    inline,
    type: inline ? mime : attachmentType(mime),
    cacheControl: 'private, no-store',
    conditional: false,
    ranges: capped ? 'none' : 'single',
    presignSeconds: shares.encrypted(share.storage_id, share.rel) ? undefined : PRESIGN_SECONDS,
    onSettled: (bytes) => slot.settle(bytes, f.size),
  });
}

/**
 * Sends one file an app page exposes (`/api/public/s/{token}/file/{ref}`): always inline and always with a
 * Content-Type, single ranges, never a presigned redirect (the page reads it from this origin), no download
 * slot (an app link counts visits, not reads). Active types go out as opaque bytes; every type but PDF
 * carries the sandboxing CSP.
 */
export async function sendExposedFile(ctx: Ctx, f: OpenFile): Promise<void> {
  const mime = f.mime || mimeOf(f.name) || 'application/octet-stream';
  const type = inlineAllowed(mime) ? mime : attachmentType(mime);
  sandboxHeaders(ctx, type);
  await serveFile(ctx, f, { inline: true, type, cacheControl: 'private, no-store', conditional: false, ranges: 'single' });
}

/** Sends a cached archive file (counted like any download). */
export async function sendZipFile(ctx: Ctx, shares: SharesService, share: ShareRow, file: string, size: number, name: string): Promise<void> {
  const slot = await shares.claimDownload(share);
  ctx.status = 200;
  ctx.length = size;
  fileHeaders(ctx, name, 'application/zip', false);
  await slot.settle(await sendLocal(ctx, file, 0, size - 1), size);
}

/** Headers of a file response: disposition, type, no caching by shared caches, the sandbox CSP (not on PDF, which browsers refuse to show sandboxed). */
export function fileHeaders(ctx: Ctx, name: string, type: string, inline: boolean): void {
  sandboxHeaders(ctx, type);
  ctx.type = type;
  ctx.set('Content-Disposition', contentDisposition(name, inline));
  ctx.set('Cache-Control', 'private, no-store');
}

function sandboxHeaders(ctx: Ctx, type: string): void {
  publicHeaders(ctx);
  if (type !== 'application/pdf') ctx.set('Content-Security-Policy', SANDBOX);
}

/** Active or unknown types go out as a download of opaque bytes. */
function attachmentType(mime: string): string {
  return /^(text\/html|application\/xhtml|image\/svg|text\/xml|application\/xml|text\/javascript|application\/javascript)/.test(mime)
    ? 'application/octet-stream'
    : mime;
}
