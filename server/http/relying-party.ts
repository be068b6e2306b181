/**
 * Where the browser is, as WebAuthn sees it: the relying-party id (a host
 * name without port) and the page's origin. When the request came to the
 * host of SERVICE_PUBLIC_URL (a tunnel, usually ending TLS before us), the
 * public URL's scheme and host are the browser's; otherwise the request's
 * own Host is, over the scheme of this socket. A passkey only works at the
 * RP id it was made for (docs/auth.md).
 */
import type { RelyingParty } from '../auth';
import type { Ctx } from './context';

/** The relying party of this request, or null without a Host header. */
export function relyingParty(ctx: Ctx, publicUrl: string): RelyingParty | null {
  const host = ctx.get('host').toLowerCase();
  if (!host) return null;
  if (publicUrl) {
    const pub = new URL(publicUrl);
    if (pub.host.toLowerCase() === host) return { id: pub.hostname, origin: pub.origin };
  }
  return { id: new URL(`http://${host}`).hostname, origin: `${ctx.protocol}://${host}` };
}
