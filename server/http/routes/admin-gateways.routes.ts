/** `GET /api/admin/gateways`: which protocol gateways listen, where, and who is signed in. */
import Router from '@koa/router';
import type { GatewayRegistry } from '../../gateways';
import { requireAdmin } from '../middlewares/auth';
import type { AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: gateways', 'admin');

export function adminGatewayRoutes(d: { registry: GatewayRegistry }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/gateways' });
  r.use(requireAdmin);
  r.get('/', doc({ summary: 'Gateway listeners and their live sessions' }), (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = d.registry.status();
  });
  return r;
}
