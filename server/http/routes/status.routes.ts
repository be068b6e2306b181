/**
 * GET /api/admin/status (admin): how the service is holding up right now.
 * An object of sections, each owned by the part it describes; later issues
 * add their own (governor, egress, storages) beside these.
 * GET /api/health (no sign-in): what a load balancer or a container runtime
 * asks of each instance: 200 while it can serve, 503 `database_busy` while
 * its database is away (docs/operations.md).
 */
import Router from '@koa/router';
import { requireAdmin } from '../middlewares/auth';
import type { AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Meta', 'public');

/** One section of the status object: a name and a function that reads it at request time (a promise is awaited). */
export type StatusSection = [name: string, read: () => unknown];

export function statusRoutes(sections: StatusSection[], probeDatabase: () => Promise<void>): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api' });
  r.get('/health', doc({ summary: 'Liveness for load balancers and containers: 200 while it can serve, 503 while its database is away' }), async (ctx) => {
    await probeDatabase();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  r.get(
    '/admin/status',
    doc({ summary: 'How the service is holding up: event loop, admission, database waits, memory and more', auth: 'admin', tag: 'Admin: status' }),
    requireAdmin,
    async (ctx) => {
      const body: Record<string, unknown> = {};
      for (const [name, read] of sections) body[name] = await read();
      ctx.set('Cache-Control', 'no-store');
      ctx.body = body;
    },
  );
  return r;
}
