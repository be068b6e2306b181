/** Koa state shared by every middleware and route. */
import type { Pacer } from '../lib/egress';
import type { Next } from 'koa';
import type { RouterContext } from '@koa/router';
import { keyActor, personActor, type Actor, type Branding, type KeyScope, type Principal } from '../auth';
import type { Lang } from '../lib/i18n';
import type { Door } from './error-map';
import type { ActorRef, RequestMeta } from '../events';
import type { TenantScope } from '../db';
import { AppError } from '../errors';

export interface AppState {
  principal?: Principal;
  /** The tenant this request is for (middlewares/tenant.ts): sign-in, sessions, keys and link tokens are looked up in it. */
  tenant: TenantScope;
  /** The `/t/<slug>` prefix the request came with (stripped from `ctx.path`), when it selected its tenant by one. */
  tenantBase?: string;
  /** Set when the selected tenant is suspended (read from the tenants' cache): no session or key resolves, no link is found. */
  tenantSuspended?: true;
  /** The request's tenant's branding of its public pages (auth/brandings.ts); absent when it has none. */
  branding?: Branding;
  door: Door;
  lang: Lang;
  ip: string;
  loopback: boolean;
  ua: string;
  /** True when the caller authenticated with the session cookie (CSRF applies). */
  viaCookie?: boolean;
  /** Set when the caller signed the request with an API key: what the key may do. */
  key?: KeyScope;
  /** The document server callback's `Authorization` header, kept by the public listener (which clears it for everything else). */
  docserverAuthorization?: string;
  /** Set by the public links listener (every request there counts as from the internet). */
  publicListener?: boolean;
  /** The uplink budget of this response (public link transfers from the internet); the byte senders spend it. */
  egress?: Pacer;
}

export type Ctx = RouterContext<AppState>;
export type Mw = (ctx: Ctx, next: Next) => Promise<void> | void;

export const actorOf = (ctx: Ctx): ActorRef | null =>
  ctx.state.principal ? { id: ctx.state.principal.id, email: ctx.state.principal.email, ...(ctx.state.key && { key_id: ctx.state.key.id }) } : null;
export const reqMeta = (ctx: Ctx): RequestMeta & { ip: string; loopback: boolean } => ({ ip: ctx.state.ip, ua: ctx.state.ua, loopback: ctx.state.loopback });
/** The signed-in principal; routes behind `requireUser` may call this. */
export const me = (ctx: Ctx): Principal => ctx.state.principal!;
/**
 * The tenant a public link's, drop's or app page's token is looked up in: the request's (its host or path
 * prefix, docs/tenants.md), so another tenant's token is `not_found`. A suspended tenant's links answer as
 * missing ones.
 */
export function linkTenant(ctx: Ctx): TenantScope {
  if (ctx.state.tenantSuspended) throw new AppError('not_found');
  return ctx.state.tenant;
}
/** The caller as the actor of a file-service call (the person, or their API key); routes behind `requireUser` may call this. */
export const actor = (ctx: Ctx): Actor => (ctx.state.key ? keyActor(me(ctx), ctx.state.key, reqMeta(ctx)) : personActor(me(ctx), reqMeta(ctx)));

/**
 * This server's address as the request reached it (`http://host:port`), for
 * links when SERVICE_PUBLIC_URL is unset. Not Koa 3's `ctx.origin`: that is the
 * request's Origin header, absent on a same-origin GET.
 */
export const selfUrl = (ctx: Ctx): string => `${ctx.protocol}://${ctx.host}`;

/**
 * Where the links the server writes for this request start: `selfUrl` and, for a request that came through a
 * tenant's `/t/<slug>` prefix, that prefix (docs/tenants.md), so a link opens in the same tenant.
 */
export const linkOrigin = (ctx: Ctx): string => selfUrl(ctx) + (ctx.state.tenantBase ?? '');

/**
 * The stored part's etag as the response's `ETag` header too (quoted, as S3's
 * UploadPart answers), for clients that read it there instead of the body.
 */
export function setPartEtag(ctx: Ctx, etag: string): void {
  ctx.set('ETag', `"${etag.replace(/"/g, '')}"`);
}
