/**
 * Admin: webhook targets and their delivery log.
 *   GET    /api/admin/webhooks                 {targets, events}
 *   POST   /api/admin/webhooks                 {url, events?, secret?, enabled?} → the target with its plain key (once)
 *   PATCH  /api/admin/webhooks/:id             partial
 *   DELETE /api/admin/webhooks/:id
 *   PUT    /api/admin/webhooks/legacy          {url, secret?}: the older single URL ('' clears it)
 *   GET    /api/admin/webhooks/deliveries      query target_id, limit
 */
import Router from '@koa/router';
import { WEBHOOK_EVENTS, type Webhooks } from '../../events';
import type { Protection } from '../../protection';
import { requireAdmin } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actorOf, me, type AppState } from '../context';
import { q, validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: protection', 'admin');

const target = z.strictObject({
  url: z.string().max(2048),
  events: z.array(z.enum(WEBHOOK_EVENTS)).max(WEBHOOK_EVENTS.length),
  secret: z.string().min(16).max(256),
  enabled: z.boolean(),
});
const legacy = z.strictObject({ url: z.string().max(2048), secret: z.string().max(256).optional() });
const created = target.partial().required({ url: true });
const changed = target.partial();
const logQuery = z.object({ target_id: q.str(64).optional(), limit: q.int(1, 1000).default(100) });

export function webhookRoutes(d: { protection: Protection; webhooks: Webhooks; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/webhooks' });
  r.use(async (ctx, next) => {
    ctx.state.door = 'admin';
    await next();
  }, requireAdmin);
  const t = d.protection.webhooks;

  r.get('/', doc({ summary: 'Webhook targets and the events they may hear' }), (ctx) => {
    ctx.body = { targets: t.list(me(ctx)), events: WEBHOOK_EVENTS };
  });
  r.get('/deliveries', doc({ summary: 'The webhook delivery log', query: logQuery }), async (ctx) => {
    const o = validate(logQuery, ctx.query);
    ctx.body = { deliveries: await d.webhooks.list(me(ctx), { targetId: o.target_id, limit: o.limit }) };
  });
  r.put('/legacy', doc({ summary: 'Set the older single webhook URL (empty clears it)', body: legacy }), async (ctx) => {
    const b = validate(legacy, await readObject(ctx, d.maxJsonBytes));
    await t.setLegacy(b.url, b.secret, actorOf(ctx));
    ctx.body = { targets: t.list(me(ctx)) };
  });
  r.post('/', doc({ summary: 'Add a webhook target (its signing key is shown once)', body: created }), async (ctx) => {
    const b = validate(created, await readObject(ctx, d.maxJsonBytes));
    ctx.body = await t.create(me(ctx), b, actorOf(ctx));
  });
  r.patch('/:id', doc({ summary: 'Change a webhook target', body: changed }), async (ctx) => {
    const b = validate(changed, await readObject(ctx, d.maxJsonBytes));
    ctx.body = await t.update(me(ctx), ctx.params.id, b, actorOf(ctx));
  });
  r.delete('/:id', doc({ summary: 'Remove a webhook target' }), async (ctx) => {
    await t.remove(me(ctx), ctx.params.id, actorOf(ctx));
    ctx.body = { ok: true };
  });
  return r;
}
