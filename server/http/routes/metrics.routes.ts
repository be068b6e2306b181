/**
 * GET /metrics: the Prometheus text exposition (404 while off, 401 without
 * the token; docs/operations.md, "Metrics"). Admin: GET/PATCH
 * /api/admin/metrics (on or off, access `token` or `lan`), GET
 * /api/admin/metrics/token (the token in clear, for the scrape config) and
 * POST /api/admin/metrics/token (a new one; the old stops working).
 */
import Router from '@koa/router';
import type { EventBus } from '../../events';
import type { Metrics } from '../metrics/metrics';
import { requireAdmin } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: settings', 'admin');

const patch = z.strictObject({ enabled: z.boolean().optional(), access: z.enum(['token', 'lan']).optional() });

/** Two routers, each behind its own prefix, so other requests pass them by a string compare (route-dispatch.ts). */
export function metricsRoutes(d: { metrics: Metrics; bus: EventBus; maxJsonBytes: number }): Array<Router<AppState>> {
  const scrape = new Router<AppState>({ prefix: '/metrics' });
  const r = new Router<AppState>({ prefix: '/api/admin/metrics' });
  r.use(requireAdmin);
  const audit = (ctx: Ctx, changes: Record<string, unknown>) =>
    d.bus.emit(me(ctx), 'audit', { action: 'admin.config_change', actor: actorOf(ctx), request: reqMeta(ctx), resource: 'metrics', meta: { changes } });

  scrape.get(
    '/',
    doc({
      summary: 'Prometheus metrics (text exposition; 404 while off)',
      tag: 'Operations',
      auth: 'signed',
      description: 'Bearer metrics token, or no token from the LAN when access is `lan` (docs/operations.md, "Metrics").',
      produces: ['text/plain'],
    }),
    async (ctx) => {
      const out = await d.metrics.scrape(ctx);
      ctx.set('Cache-Control', 'no-store');
      ctx.type = out.contentType;
      ctx.body = out.body;
    },
  );

  r.get('/', doc({ summary: 'Metrics export: on or off, who may scrape' }), (ctx) => {
    ctx.body = d.metrics.view();
  });
  r.patch('/', doc({ summary: 'Switch the metrics export, choose who may scrape', body: patch }), async (ctx) => {
    const b = validate(patch, await readObject(ctx, d.maxJsonBytes));
    const { from, to } = await d.metrics.update(b);
    const changes: Record<string, unknown> = {};
    for (const k of ['enabled', 'access'] as const) if (from[k] !== to[k]) changes[k] = { from: from[k], to: to[k] };
    if (Object.keys(changes).length) await audit(ctx, changes);
    ctx.body = d.metrics.view();
  });
  r.get('/token', doc({ summary: 'The metrics token, for the scrape config' }), (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token: d.metrics.token() };
  });
  r.post('/token', doc({ summary: 'A new metrics token (the old one stops working)' }), async (ctx) => {
    const token = await d.metrics.regenerate();
    await audit(ctx, { token: 'regenerated' });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token };
  });
  return [scrape, r];
}
