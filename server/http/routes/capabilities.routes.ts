/**
 * GET /api/capabilities (alias /api/files/capabilities): public, cacheable for
 * an hour by the caller only (`assistant` depends on who asks).
 */
import Router from '@koa/router';
import type { Capabilities } from '../../contract';
import type { AppState, Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Meta', 'public');

export function capabilitiesRoutes(get: (ctx: Ctx) => Capabilities): Router<AppState> {
  const r = new Router<AppState>();
  const handler = (ctx: Ctx) => {
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.set('Vary', 'Authorization, Cookie');
    ctx.body = get(ctx);
  };
  r.get('/api/capabilities', doc({ summary: 'What this server offers (Capabilities object)' }), handler);
  r.get('/api/files/capabilities', doc({ summary: 'Alias of /api/capabilities' }), handler);
  return r;
}
