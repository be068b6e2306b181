/** /api/admin/update: cached status (never touches the network), check, apply (409 when refused). */
import Router from '@koa/router';
import type { Updater } from '../../update';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState } from '../context';
import type { EventBus } from '../../events';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: updates', 'admin');

const applyBody = z
  .object({
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/)
      .optional(),
  })
  .strict();

export function updateRoutes(d: { updater: Updater; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/update' });
  r.use(requireAdmin);
  r.get('/', doc({ summary: 'Update status (cached; never touches the network)' }), (ctx) => {
    ctx.body = d.updater.status();
  });
  r.post('/check', doc({ summary: 'Check for an update now' }), async (ctx) => {
    ctx.body = await d.updater.check();
  });
  r.post('/apply', doc({ summary: 'Install the pending release (409 when refused, e.g. in a container)', body: applyBody }), async (ctx) => {
    const b = validate(applyBody, await readObject(ctx, d.maxJsonBytes));
    await d.bus.emit(me(ctx), 'audit', {
      action: 'admin.config_change',
      actor: actorOf(ctx),
      request: reqMeta(ctx),
      resource: 'update',
      meta: { apply: b.version ?? 'latest' },
    });
    ctx.body = await d.updater.apply(b.version);
  });
  return r;
}
