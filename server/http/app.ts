/**
 * The Koa application: request context, error envelope, authentication,
 * CSRF guard, the feature routers, the JSON 404 for unknown /api routes, and
 * the web UI with its SPA fallback.
 */
import type { BlockList } from 'node:net';
import Koa from 'koa';
import type { Router } from '@koa/router';
import type { Auth, Brandings, TenantDirectory } from '../auth';
import type { Lang } from '../lib/i18n';
import { AppError } from '../errors';
import { errorEnvelope } from './middlewares/errors';
import { authenticate, csrfGuard, requestContext } from './middlewares/auth';
import { aiAdminAlias, keyScope } from './middlewares/key-scope';
import { selectTenant } from './middlewares/tenant';
import { platformOnly } from './middlewares/platform-routes';
import { serveRenderer } from './static';
import type { AppOrigins } from './app-page';
import { routerDispatch } from './route-dispatch';
import type { AppState, Mw } from './context';

export interface AppOptions {
  auth: Auth;
  /** Multi-tenant mode's tenants (a request selects one by host or `/t/<slug>/`); null: every request is tenant 1's. */
  tenants?: TenantDirectory | null;
  /** The tenants' branding of the public pages; none: the pages are plain. */
  brandings?: Brandings;
  lang: Lang;
  /** Peers whose X-Forwarded-For is believed (default: loopback). */
  trustedProxies?: BlockList;
  routers: Array<Router<AppState>>;
  rendererDir: string;
  /** The external origins the web app may load from (its page's Content-Security-Policy); none when absent. */
  appOrigins?: () => AppOrigins;
  log: (msg: string, err?: unknown) => void;
  /** Extra middlewares that run before routing (activity tracking, public-only filter). */
  before?: Mw[];
  /** Told when a request met a database lock held by another process. */
  onDbBusy?: () => void;
  /** Middlewares that need the caller (admission control), run after authentication. */
  afterAuth?: Mw[];
}

export function buildApp(o: AppOptions): Koa<AppState> {
  const app = new Koa<AppState>();
  app.proxy = false;
  app.silent = true;
  app.use(requestContext(o.lang, o.trustedProxies));
  app.use(errorEnvelope(o.log, o.onDbBusy));
  // Before everything that reads the path or signs the caller in: it strips a `/t/<slug>` prefix.
  app.use(selectTenant(o.tenants ?? null));
  const brandings = o.brandings;
  if (brandings)
    app.use((ctx, next) => {
      ctx.state.branding = brandings.of(ctx.state.tenant);
      return next();
    });
  for (const mw of o.before ?? []) app.use(mw);
  app.use(authenticate(o.auth, o.lang));
  app.use(aiAdminAlias);
  app.use(keyScope);
  // Multi-tenant mode only: the installation's routes are the platform operator's.
  if (o.tenants) app.use(platformOnly);
  app.use(csrfGuard);
  for (const mw of o.afterAuth ?? []) app.use(mw);
  app.use(routerDispatch(o.routers));
  app.use(async (ctx, next) => {
    if (ctx.path === '/api' || ctx.path.startsWith('/api/')) throw new AppError('not_found', {}, { route: `${ctx.method} ${ctx.path}` });
    await next();
  });
  app.use(serveRenderer(o.rendererDir, /^\/(api|s|d)(\/|$)/, o.appOrigins ?? (() => ({ docserver: '', diagram: '' }))));
  // A client that goes away mid-stream is normal (closed tabs, cancelled downloads, SSE reconnects).
  const gone = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_DESTROYED', 'HPE_INVALID_EOF_STATE']);
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (!gone.has(err?.code ?? '')) o.log('koa error', err);
  });
  return app;
}
