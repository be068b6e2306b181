/**
 * The address a pairing QR code sends the phone to. The tray opens the page
 * with `?base=<LAN URL>`; otherwise it is the page's own origin. A `base` is
 * taken only when it names this page's host or a local-network address
 * (private, link-local or shared IPv4 ranges, IPv6 unique-local or
 * link-local, `.local` and single-label names): a crafted link must not make
 * the code send a phone, and its key, to a stranger's server.
 */

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function localNetwork(host: string): boolean {
  const m = V4.exec(host);
  if (m) {
    const [a, b] = [Number(m[1]), Number(m[2])];
    return (
      a === 10 || a === 127 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (host.startsWith('[')) return /^\[(::1|f[cd][0-9a-f]{0,2}:|fe[89ab][0-9a-f]?:)/i.test(host);
  return host === 'localhost' || host.endsWith('.local') || /^[a-z0-9-]+$/i.test(host);
}

/** The origin the QR code should use: `param` when it is an acceptable http(s) address, else `origin`. */
export function pairingBase(param: string | null, origin: string): string {
  if (!param) return origin;
  let u: URL;
  try {
    u = new URL(param);
  } catch {
    return origin;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return origin;
  return u.hostname === new URL(origin).hostname || localNetwork(u.hostname) ? u.origin : origin;
}

/** True when `base` means "this computer" (a phone cannot reach it). */
export function isLoopback(base: string): boolean {
  const host = new URL(base).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}
