/**
 * Public app pages over HTTP (SPEC App plugins: "Public pages of apps are real
 * shares at /s/{token}"; docs/app-plugins.md, "Public app pages"): the link's
 * state, its PIN gate, the app's events, the jobs they queued and the exposed files under
 * /api/public/s/{token}, the HTML page at /s/{token} for an app link (other
 * links fall through to the share routes), the admin's list of app links, and
 * the retired /p/ and /api/p/ addresses (301 to their /s/ equivalents).
 * Everything here is the public door (`read_only` 409, PIN `locked` 429).
 */
import Router from '@koa/router';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../errors';
import type { AppPlugins } from '../../plugins';
import { pt, RateLimiter, type Shares } from '../../shares';
import type { AppState, Ctx, Mw } from '../context';
import { linkTenant, me, reqMeta } from '../context';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { sendPage, esc, publicHeaders } from '../public/page';
import type { AdmitPublic } from '../public/egress';
import { sendExposedFile } from '../public/send-file';
import { publicDoor } from './shares-public.routes';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Public links', 'public');

/** The cookie that carries a page's download token after its PIN (scoped to that link's API path). */
export const PAGE_COOKIE = 'service_page_dt';
/** The app page of the web UI (built by Vite from renderer/app-page.html). */
const APP_PAGE_FILE = 'app-page.html';
/** A missing page file is looked for again after this long. */
const MISSING_RECHECK_MS = 30_000;
/** The page's own code and styles from this origin; nothing framed, no plugin, no base or form elsewhere. */
const APP_PAGE_CSP =
  "default-src 'self'; script-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/** An event body: a surface's values are small; the 64 KiB data cap itself is the service's (413). */
const EVENT_BODY_BYTES = 256 * 1024;

export interface AppsPublicDeps {
  plugins: AppPlugins;
  shares: Shares;
  rendererDir: string;
  secureCookies: boolean;
  admit?: AdmitPublic;
  /** Per-address limits (calls per minute; PIN tries per 10 minutes). */
  limits?: { eventsPerMinute?: number; pinPer10Minutes?: number };
}

const pinBody = z.object({ pin: z.string().max(64) });
/** The page service checks an event (its kind, the 64 KiB data cap) with its own codes; every key passes here. */
const eventBody = z.looseObject({
  state: z.unknown().optional(),
  event: z.unknown().optional().describe('open (the default), change, action or submit'),
  action_id: z.unknown().optional(),
  data: z.unknown().optional(),
});

export function appsPublicRoutes(d: AppsPublicDeps): Router<AppState> {
  const r = new Router<AppState>();
  const pages = () => {
    if (!d.plugins.pages) throw new AppError('not_found');
    return d.plugins.pages;
  };
  const calls = new RateLimiter(d.limits?.eventsPerMinute ?? 300, 60_000);
  const pins = new RateLimiter(d.limits?.pinPer10Minutes ?? 60, 10 * 60_000);
  const api = (token: string) => `/api/public/s/${encodeURIComponent(token)}`;

  const credOf = (ctx: Ctx) => ({
    dt: (typeof ctx.query.dt === 'string' ? ctx.query.dt : undefined) ?? (ctx.get('x-service-dt') || ctx.cookies.get(PAGE_COOKIE) || undefined),
    pin: ctx.get('x-service-pin') || undefined,
  });
  /** The guard and egress budget of a live link (the uplink protection of every public route). */
  const admitLink = async (ctx: Ctx) => {
    const row = await d.shares.service.repo.byToken(linkTenant(ctx), ctx.params.token);
    if (row && row.kind === 'app') await d.admit?.(ctx, row);
  };
  const noStore: Mw = async (ctx, next) => {
    publicHeaders(ctx);
    ctx.set('Cache-Control', 'no-store');
    await next();
  };

  r.get('/api/public/s/:token', doc({ summary: 'A link’s state; an app link carries its app once unlocked' }), publicDoor, noStore, async (ctx) => {
    calls.hit(ctx.state.ip);
    await admitLink(ctx);
    ctx.body = await pages().state(linkTenant(ctx), ctx.params.token, credOf(ctx), reqMeta(ctx));
  });

  r.post(
    '/api/public/s/:token/pin',
    doc({ summary: 'Unlock a link with its PIN (sets the page’s download-token cookie)', body: pinBody }),
    publicDoor,
    noStore,
    async (ctx) => {
      pins.hit(ctx.state.ip);
      const b = validate(pinBody, await readObject(ctx, 4096));
      const out = await pages().pin(linkTenant(ctx), ctx.params.token, b.pin);
      // TLS usually ends at the tunnel: the cookie must still be Secure there (as the session cookie is).
      if (d.secureCookies) (ctx.cookies as unknown as { secure: boolean }).secure = true;
      ctx.cookies.set(PAGE_COOKIE, out.download_token, {
        httpOnly: true,
        sameSite: 'strict',
        secure: d.secureCookies,
        expires: new Date(out.expires_at),
        path: api(ctx.params.token),
        overwrite: true,
      });
      ctx.body = { unlocked: true, ...out };
    },
  );

  r.post(
    '/api/public/s/:token/event',
    doc({ summary: 'An app page’s event: the next surface, or 202 with the queued job (an empty body opens the page)', body: eventBody }),
    publicDoor,
    noStore,
    async (ctx) => {
      calls.hit(ctx.state.ip);
      await admitLink(ctx);
      const hasBody = Number(ctx.get('content-length') || 0) > 0 || !!ctx.get('transfer-encoding');
      const body = hasBody ? validate(eventBody, await readObject(ctx, EVENT_BODY_BYTES)) : null;
      const out = await pages().event(linkTenant(ctx), ctx.params.token, credOf(ctx), body, ctx.state.lang, { ip: ctx.state.ip, request: reqMeta(ctx) });
      ctx.status = out.status;
      ctx.body = out.body;
    },
  );

  // A job the page queued, followed by its visitor (docs/app-plugins.md, "Following a page's job").
  r.get('/api/public/s/:token/ops/:id', doc({ summary: 'A job an app page queued, followed by its visitor' }), publicDoor, noStore, async (ctx) => {
    calls.hit(ctx.state.ip);
    await admitLink(ctx);
    ctx.body = await pages().op(linkTenant(ctx), ctx.params.token, credOf(ctx), ctx.params.id, ctx.state.lang);
  });

  r.get(
    '/api/public/s/:token/file/:ref',
    doc({ summary: 'One file an app page exposes (ranges honoured, inline)', produces: ['application/octet-stream'] }),
    publicDoor,
    async (ctx) => {
      await admitLink(ctx);
      const f = await pages().file(linkTenant(ctx), ctx.params.token, credOf(ctx), ctx.params.ref, reqMeta(ctx));
      await sendExposedFile(ctx, f);
    },
  );

  // The HTML page of an app link; any other token falls through to the share routes.
  let page: { html: Buffer | null; at: number } | null = null;
  const pageHtml = async (): Promise<Buffer | null> => {
    if (page && (page.html || Date.now() - page.at < MISSING_RECHECK_MS)) return page.html;
    const html = await readFile(join(d.rendererDir, APP_PAGE_FILE)).catch(() => null);
    page = { html, at: Date.now() };
    return html;
  };
  r.get('/s/:token', async (ctx, next) => {
    const row = await d.shares.service.repo.byToken(linkTenant(ctx), ctx.params.token);
    if (!row || row.kind !== 'app') return next();
    await publicDoor(ctx, async () => {
      // Dead links get the share pages' styled answers (errors render through publicDoor's deadPage).
      const o = await d.shares.service.open(linkTenant(ctx), ctx.params.token, 'app');
      await d.admit?.(ctx, o.share);
      if (!(await d.plugins.pages?.available(o.share))) throw new AppError('revoked', { reason: 'app_unavailable' });
      const html = await pageHtml();
      if (!html) {
        const lang = ctx.state.lang;
        sendPage(ctx, {
          lang,
          title: pt(lang, 'dead.title'),
          body: `<div class="card"><h1>${esc(pt(lang, 'dead.title'))}</h1><p>${esc(pt(lang, 'app.page_unavailable'))}</p></div>`,
          status: 503,
        });
        return;
      }
      publicHeaders(ctx);
      ctx.set('Content-Security-Policy', APP_PAGE_CSP);
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = html;
    });
  });

  // The retired /p/ addresses (SPEC Versioning 10).
  const moved =
    (to: (path: string) => string): Mw =>
    async (ctx) => {
      ctx.status = 301;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.redirect(to(ctx.path) + (ctx.querystring ? `?${ctx.querystring}` : ''));
    };
  r.all(
    '/p/*rest',
    doc({ summary: 'Retired address: 301 to /s/…', status: 301, produces: [], deprecated: true }),
    moved((p) => `/s/${p.slice('/p/'.length)}`),
  );
  r.all(
    '/api/p/*rest',
    doc({ summary: 'Retired address: 301 to /api/public/s/…', status: 301, produces: [], deprecated: true }),
    moved((p) => `/api/public/s/${p.slice('/api/p/'.length)}`),
  );

  // The admin's list of app links (session only: key-scope refuses API keys on /api/admin/app-plugins).
  const admin: Mw = async (ctx, next) => {
    ctx.state.door = 'admin';
    await requireAdmin(ctx, next);
  };
  const listQuery = z.object({
    plugin: z.string().max(64).optional(),
    active: z.enum(['true', 'false', '1', '0']).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    offset: z.coerce.number().int().min(0).default(0),
  });
  r.get(
    '/api/admin/app-plugins/shares',
    doc({ summary: 'App links (filter by app, active; paging)', query: listQuery, auth: 'admin', tag: 'App plugins' }),
    admin,
    async (ctx) => {
      const q = validate(listQuery, ctx.query);
      const origin = ctx.origin;
      ctx.body = await pages().list(
        me(ctx),
        { plugin: q.plugin, active: q.active === undefined ? undefined : q.active === 'true' || q.active === '1', limit: q.limit, offset: q.offset },
        origin,
      );
    },
  );
  return r;
}
