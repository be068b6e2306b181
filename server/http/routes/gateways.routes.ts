/**
 * `GET /api/gateways`: where each protocol gateway answers, for anyone
 * signed in (the "Connect with a desktop app" instructions); no sessions, no
 * listen errors (those are the admin's, `GET /api/admin/gateways`).
 */
import Router from '@koa/router';
import type { GatewayAddresses } from '../../contract';
import type { GatewayRegistry } from '../../gateways';
import { requireUser } from '../middlewares/auth';
import type { AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Gateways', 'user');

export function gatewayRoutes(d: { registry: GatewayRegistry }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/gateways' });
  r.use(requireUser);
  r.get('/', doc({ summary: 'The file gateways (WebDAV, SFTP, FTP, S3) and how to connect to each' }), (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const body: GatewayAddresses = { gateways: d.registry.status().gateways.map(({ protocol, enabled, url }) => ({ protocol, enabled, url })) };
    ctx.body = body;
  });
  return r;
}
