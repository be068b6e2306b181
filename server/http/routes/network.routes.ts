/**
 * GET /api/network/addresses (signed in; extension, issue 39, 15): where
 * other devices reach this server, so a link made from a page opened at
 * 127.0.0.1 can be offered at the LAN or public address instead.
 * `{public_url, loopback_only, urls}`; `public_url` is SERVICE_PUBLIC_URL or null.
 */
import Router from '@koa/router';
import { networkInterfaces } from 'node:os';
import { reachableUrls } from '../../lib/lan-addresses';
import { requireUser } from '../middlewares/auth';
import type { AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Meta', 'user');

export function networkRoutes(d: { host: string; publicUrl: string }): Router<AppState> {
  const r = new Router<AppState>();
  r.get('/api/network/addresses', doc({ summary: 'The addresses other devices on the LAN can reach this server at' }), requireUser, (ctx) => {
    const reach = reachableUrls(d.host, networkInterfaces(), ctx.req.socket.localPort ?? 0, ctx.protocol === 'https' ? 'https' : 'http');
    ctx.set('Cache-Control', 'private, no-store');
    ctx.body = { public_url: d.publicUrl || null, loopback_only: reach.loopbackOnly, urls: reach.urls };
  });
  return r;
}
