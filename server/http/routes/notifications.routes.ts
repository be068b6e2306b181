/**
 * The bell: GET /api/notifications (newest first, `before` pages by id,
 * `unread=1` filters), GET /api/notifications/unread-count and
 * POST /api/notifications/read {ids} or {all: true}. Each user sees only
 * their own rows.
 */
import Router from '@koa/router';
import type { Bell } from '../../events';
import { requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { me, type AppState } from '../context';
import { q, validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Events', 'user');

const listQuery = z.object({ limit: q.int(1, 200).default(50), before: q.int(1).optional(), unread: q.bool().optional() });
const readBody = z.union([z.strictObject({ ids: z.array(z.number().int().positive()).min(1).max(500) }), z.strictObject({ all: z.literal(true) })]);

export function notificationRoutes(d: { bell: Bell; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/notifications' });
  r.use(requireUser);

  r.get('/', doc({ summary: 'My notifications, newest first (`before` pages by id)', query: listQuery }), async (ctx) => {
    const o = validate(listQuery, ctx.query);
    const p = me(ctx);
    ctx.body = {
      notifications: await d.bell.list(p, p.id, { limit: o.limit, before: o.before, unreadOnly: o.unread }),
      unread: await d.bell.unreadCount(p, p.id),
    };
  });
  r.get('/unread-count', doc({ summary: 'How many of my notifications are unread' }), async (ctx) => {
    ctx.body = { unread: await d.bell.unreadCount(me(ctx), me(ctx).id) };
  });
  r.post('/read', doc({ summary: 'Mark notifications read (`ids`, or `all: true`)', body: readBody }), async (ctx) => {
    const b = validate(readBody, await readObject(ctx, d.maxJsonBytes));
    const p = me(ctx);
    const marked = await d.bell.markRead(p, p.id, 'ids' in b ? b.ids : undefined);
    ctx.body = { marked, unread: await d.bell.unreadCount(p, p.id) };
  });
  return r;
}
