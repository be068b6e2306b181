/**
 * Request context (client address, loopback, language), authentication from
 * the `service_session` cookie or `Authorization: Bearer`, role gates, and
 * CSRF protection for cookie-authenticated writes.
 */
import type { BlockList } from 'node:net';
import { AppError } from '../../errors';
import { clientAddress, parseAddressList } from '../../lib/net-addr';
import { pickLang, type Lang } from '../../lib/i18n';
import { isKeyToken, type Auth } from '../../auth';
import type { Ctx, Mw } from '../context';

export const SESSION_COOKIE = 'service_session';
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const LOCAL_HOSTS = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/i;
const DEFAULT_TRUSTED = parseAddressList('loopback').list;
const FORWARD_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'cf-connecting-ip', 'true-client-ip'];

/**
 * A request is "loopback" only when the socket is local, no proxy header says
 * it was forwarded, and the Host is a local name: a tunnel client running on
 * this machine must not make internet visitors look local.
 */
export function requestContext(defaultLang: Lang, trustedProxies: BlockList = DEFAULT_TRUSTED): Mw {
  return async (ctx, next) => {
    const remote = ctx.req.socket.remoteAddress ?? '';
    const socketLocal = LOOPBACK.test(remote);
    const forwarded = FORWARD_HEADERS.some((h) => ctx.get(h));
    // The client address: X-Forwarded-For only from a trusted proxy (SERVICE_TRUSTED_PROXIES), never from anyone else.
    ctx.state.ip = clientAddress(remote, ctx.get('x-forwarded-for'), trustedProxies);
    ctx.state.loopback = socketLocal && !forwarded && LOCAL_HOSTS.test(ctx.get('host'));
    ctx.state.ua = ctx.get('user-agent').slice(0, 300);
    ctx.state.door ??= 'api';
    ctx.state.lang = pickLang([ctx.query.lang as string | undefined], ctx.get('accept-language'), defaultLang);
    await next();
  };
}

/**
 * Resolves the caller when a valid session cookie, bearer session token or
 * bearer API key (`fdk_…`) is present; never rejects. A bad token leaves the
 * request anonymous, so protected routes answer the same 401 for a revoked,
 * expired, malformed or unknown credential.
 */
export function authenticate(auth: Auth, defaultLang: Lang): Mw {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    let token: string | undefined;
    if (header.toLowerCase().startsWith('bearer ')) token = header.slice(7).trim();
    else {
      token = ctx.cookies.get(SESSION_COOKIE);
      if (token) ctx.state.viaCookie = true;
    }
    // A suspended tenant's sessions and keys stop at once (its status comes from the tenants' cache).
    if (ctx.state.tenantSuspended) {
      token = undefined;
      ctx.state.viaCookie = false;
    }
    if (token && !ctx.state.viaCookie && isKeyToken(token)) {
      const k = await auth.keys.resolve(token, { ip: ctx.state.ip, ua: ctx.state.ua }, ctx.state.tenant);
      if (k) {
        ctx.state.principal = k.principal;
        ctx.state.key = k.scope;
        ctx.state.lang = pickLang([ctx.query.lang as string | undefined, k.principal.language], ctx.get('accept-language'), defaultLang);
      }
    } else if (token) {
      const p = await auth.sessions.resolve(ctx.state.tenant, token);
      if (p) {
        ctx.state.principal = p;
        ctx.state.lang = pickLang([ctx.query.lang as string | undefined, p.language], ctx.get('accept-language'), defaultLang);
      } else ctx.state.viaCookie = false;
    }
    await next();
  };
}

export const requireUser: Mw = async (ctx, next) => {
  if (!ctx.state.principal) throw new AppError('unauthenticated');
  await next();
};

export const requireAdmin: Mw = async (ctx, next) => {
  if (!ctx.state.principal) throw new AppError('unauthenticated');
  if (ctx.state.principal.role !== 'admin') throw new AppError('forbidden');
  await next();
};

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF for cookie-authenticated writes (bearer calls are exempt: a browser
 * never attaches them cross-site). An `Origin` (or, without it, a `Referer`)
 * must name our own host; a foreign or opaque (`null`) one is refused. A write
 * with neither header comes from a script or tool, not a browser page (every
 * current browser sends `Origin` on a cross-site POST), and is accepted only
 * when no HTML form could have sent it: an `application/json` body (cross-site
 * JSON needs a CORS preflight, which this server never grants), or no body
 * and no `Content-Type` at all (a form always declares one). Anything else
 * without an origin (form, multipart, text/plain) → `csrf_failed`.
 */
export const csrfGuard: Mw = async (ctx, next) => {
  if (!SAFE.has(ctx.method) && ctx.state.viaCookie && !csrfSafe(ctx)) throw new AppError('csrf_failed');
  await next();
};

function csrfSafe(ctx: Ctx): boolean {
  const origin = ctx.get('origin') || ctx.get('referer');
  if (origin) {
    try {
      return new URL(origin).host === ctx.get('host');
    } catch {
      return false;
    }
  }
  const type = ctx.get('content-type');
  if (type) return type.split(';')[0].trim().toLowerCase() === 'application/json';
  return !ctx.request.length && !ctx.get('transfer-encoding');
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Secure when the public URL is https. */
export function setSessionCookie(ctx: Ctx, token: string, expiresAt: string, secure: boolean): void {
  // TLS usually ends at the user's tunnel; the cookie must still be Secure there.
  if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
  ctx.cookies.set(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, expires: new Date(expiresAt), path: '/', overwrite: true });
}

export function clearSessionCookie(ctx: Ctx, secure: boolean): void {
  if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure, expires: new Date(0), path: '/', overwrite: true });
}
