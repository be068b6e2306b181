/**
 * GET /api/admin/status (admin): how the service is holding up right now.
 * An object of sections, each owned by the part it describes; later issues
 * add their own (governor, egress, storages) beside these.
 */
import Router from '@koa/router';
import { requireAdmin } from '../middlewares/auth';
import type { AppState } from '../context';

/** One section of the status object: a name and a function that reads it at request time. */
export type StatusSection = [name: string, read: () => unknown];

export function statusRoutes(sections: StatusSection[]): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.get('/status', requireAdmin, (ctx) => {
    const body: Record<string, unknown> = {};
    for (const [name, read] of sections) body[name] = read();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  });
  return r;
}
