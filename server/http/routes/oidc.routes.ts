/**
 * GET /api/auth/oidc/start and /callback: the browser's round trip through
 * the identity provider. Both answer redirects only: to the provider, to the
 * local path the sign-in started from, or to the sign-in page with
 * `?error=<code>` (the web UI shows the sentence; details go to the audit
 * row, never to the page).
 */
import Router from '@koa/router';
import { OidcError, type Oidc } from '../../auth';
import { setSessionCookie } from '../middlewares/auth';
import { reqMeta, selfUrl, type AppState, type Ctx } from '../context';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Auth', 'public');

/** Holds the state of the sign-in this browser started; sent back only to the callback. */
export const OIDC_STATE_COOKIE = 'service_oidc_state';
const STATE_PATH = '/api/auth/oidc/callback';
/** `next`: the local path to return to; anything but one string is ignored (never refused). */
const startQuery = z.object({ next: z.string().optional().catch(undefined) });
/** What the provider sends back (read whole by the sign-in; an error from the provider ends on the sign-in page). */
const callbackQuery = z.looseObject({ code: z.string().optional(), state: z.string().optional(), error: z.string().optional() });

export function oidcRoutes(d: { oidc: Oidc; secureCookies: boolean }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/auth/oidc' });
  r.use(async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  });

  r.get('/start', doc({ summary: 'Start single sign-on: redirect to the identity provider', query: startQuery, status: 302, produces: [] }), async (ctx) => {
    const { next } = validate(startQuery, ctx.query);
    await toLoginOnFailure(ctx, async () => {
      const { url, state } = await d.oidc.signIn.start(ctx.state.tenant, next, selfUrl(ctx), reqMeta(ctx));
      stateCookie(ctx, state, d.secureCookies);
      ctx.redirect(url);
    });
  });

  r.get(
    '/callback',
    doc({ summary: 'Single sign-on callback: sign in, then redirect to where the sign-in started', query: callbackQuery, status: 302, produces: [] }),
    async (ctx) => {
      const browserState = ctx.cookies.get(OIDC_STATE_COOKIE);
      stateCookie(ctx, '', d.secureCookies);
      await toLoginOnFailure(ctx, async () => {
        const { login, next } = await d.oidc.signIn.callback(ctx.state.tenant, new URLSearchParams(ctx.querystring), browserState, reqMeta(ctx));
        setSessionCookie(ctx, login.token, login.expires_at, d.secureCookies);
        ctx.redirect(next);
      });
    },
  );
  return r;
}

async function toLoginOnFailure(ctx: Ctx, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof OidcError)) throw e;
    ctx.redirect(`/login?error=${e.code}`);
  }
}

/** Sets (10 minutes) or clears (empty value) the state cookie: HttpOnly, SameSite=Lax (the provider's redirect is a top-level GET). */
function stateCookie(ctx: Ctx, state: string, secure: boolean): void {
  if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
  const life = state ? { maxAge: 10 * 60_000 } : { expires: new Date(0) };
  ctx.cookies.set(OIDC_STATE_COOKIE, state, { httpOnly: true, sameSite: 'lax', secure, path: STATE_PATH, overwrite: true, ...life });
}
