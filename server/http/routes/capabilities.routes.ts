/**
 * GET /api/capabilities (alias /api/files/capabilities): public, cacheable for
 * an hour by the caller only (`assistant` depends on who asks).
 */
import Router from '@koa/router';
import type { Capabilities } from '../../contract';
import type { AppState, Ctx } from '../context';

export function capabilitiesRoutes(get: (ctx: Ctx) => Capabilities): Router<AppState> {
  const r = new Router<AppState>();
  const handler = (ctx: Ctx) => {
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.set('Vary', 'Authorization, Cookie');
    ctx.body = get(ctx);
  };
  r.get('/api/capabilities', handler);
  r.get('/api/files/capabilities', handler);
  return r;
}
