/**
 * Request context (client address, loopback, language), authentication from
 * the `service_session` cookie or `Authorization: Bearer`, role gates, and
 * CSRF protection for cookie-authenticated writes.
 */
import type { BlockList } from 'node:net';
import { AppError } from '../../errors';
import { clientAddress, parseAddressList } from '../../lib/net-addr';
import { pickLang, type Lang } from '../../lib/i18n';
import { isKeyToken, type Auth, type KeyScope, type Principal } from '../../auth';
import type { Ctx, Mw } from '../context';

export const SESSION_COOKIE = 'service_session';
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const LOCAL_HOSTS = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/i;
const DEFAULT_TRUSTED = parseAddressList('loopback').list;
const FORWARD_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'cf-connecting-ip', 'true-client-ip'];
const BEARER = /^bearer /i;

/**
 * A request is "loopback" only when the socket is local, no proxy header says
 * it was forwarded, and the Host is a local name: a tunnel client running on
 * this machine must not make internet visitors look local.
 */
export function requestContext(defaultLang: Lang, trustedProxies: BlockList = DEFAULT_TRUSTED): Mw {
  return (ctx, next) => {
    const headers = ctx.req.headers;
    const remote = ctx.req.socket.remoteAddress ?? '';
    const socketLocal = LOOPBACK.test(remote);
    const forwarded = FORWARD_HEADERS.some((h) => headers[h]);
    // The client address: X-Forwarded-For only from a trusted proxy (SERVICE_TRUSTED_PROXIES), never from anyone else.
    ctx.state.ip = clientAddress(remote, ctx.get('x-forwarded-for'), trustedProxies);
    ctx.state.loopback = socketLocal && !forwarded && LOCAL_HOSTS.test(headers.host ?? '');
    ctx.state.ua = (headers['user-agent'] ?? '').slice(0, 300);
    ctx.state.door ??= 'api';
    ctx.state.lang = pickLang([ctx.query.lang as string | undefined], headers['accept-language'], defaultLang);
    return next();
  };
}

/**
 * Resolves the caller when a valid session cookie, bearer session token or
 * bearer API key (`fdk_…`) is present; never rejects. A bad token leaves the
 * request anonymous, so protected routes answer the same 401 for a revoked,
 * expired, malformed or unknown credential. A credential resolved moments ago
 * is answered from the caches without an await.
 */
export function authenticate(auth: Auth, defaultLang: Lang): Mw {
  // The reader's language: the query's, else the person's own, else the one requestContext chose from the headers.
  const signedIn = (ctx: Ctx, p: Principal, key?: KeyScope) => {
    ctx.state.principal = p;
    if (key) ctx.state.key = key;
    if (p.language) ctx.state.lang = pickLang([ctx.query.lang as string | undefined, p.language], ctx.req.headers['accept-language'], defaultLang);
  };
  return (ctx, next) => {
    const header = ctx.req.headers.authorization;
    let token: string | undefined;
    if (header && BEARER.test(header)) token = header.slice(7).trim();
    else {
      token = ctx.cookies.get(SESSION_COOKIE);
      if (token) ctx.state.viaCookie = true;
    }
    // A suspended tenant's sessions and keys stop at once (its status comes from the tenants' cache).
    if (ctx.state.tenantSuspended) {
      token = undefined;
      ctx.state.viaCookie = false;
    }
    if (!token) return next();
    const tenant = ctx.state.tenant;
    if (!ctx.state.viaCookie && isKeyToken(token)) {
      const meta = { ip: ctx.state.ip, ua: ctx.state.ua };
      const hit = auth.keys.recent(token, meta, tenant);
      if (hit !== undefined) {
        if (hit) signedIn(ctx, hit.principal, hit.scope);
        return next();
      }
      return auth.keys.resolve(token, meta, tenant).then((k) => {
        if (k) signedIn(ctx, k.principal, k.scope);
        return next();
      });
    }
    const hit = auth.sessions.recent(tenant, token);
    if (hit) return (signedIn(ctx, hit), next());
    if (hit === null) return ((ctx.state.viaCookie = false), next());
    return auth.sessions.resolve(tenant, token).then((p) => {
      if (p) signedIn(ctx, p);
      else ctx.state.viaCookie = false;
      return next();
    });
  };
}

export const requireUser: Mw = (ctx, next) => {
  if (!ctx.state.principal) throw new AppError('unauthenticated');
  return next();
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
export const csrfGuard: Mw = (ctx, next) => {
  if (!SAFE.has(ctx.method) && ctx.state.viaCookie && !csrfSafe(ctx)) throw new AppError('csrf_failed');
  return next();
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
