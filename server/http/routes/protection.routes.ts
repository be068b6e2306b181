/**
 * Admin: GET and PATCH /api/admin/protection (spec: Protection settings).
 * PATCH takes any subset of the fields; an unknown field or a value out of
 * range answers 400 `validation_failed` naming it, and nothing changes.
 */
import Router from '@koa/router';
import type { Protection } from '../../protection';
import { requireAdmin } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actorOf, reqMeta, type AppState } from '../context';

export function protectionRoutes(d: { protection: Protection; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/protection' });
  r.use(async (ctx, next) => {
    ctx.state.door = 'admin';
    await next();
  }, requireAdmin);

  r.get('/', async (ctx) => {
    ctx.body = await d.protection.settings.view();
  });
  r.patch('/', async (ctx) => {
    ctx.body = await d.protection.settings.patch(await readObject(ctx, d.maxJsonBytes), actorOf(ctx), reqMeta(ctx));
  });
  return r;
}
