/**
 * Admin: GET and PATCH /api/admin/protection (spec: Protection settings).
 * PATCH takes any subset of the fields; an unknown field or a value out of
 * range answers 400 `validation_failed` naming it, and nothing changes.
 */
import Router from '@koa/router';
import { PATCH_FIELDS, type Protection } from '../../protection';
import { requireAdmin } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actorOf, me, reqMeta, type AppState } from '../context';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: protection', 'admin');

/** The fields PATCH takes; the settings service checks each value and refuses an unknown field (so this object lets every key through). */
const patch = z.looseObject(Object.fromEntries(PATCH_FIELDS.map((k) => [k, z.unknown().optional()])));

export function protectionRoutes(d: { protection: Protection; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/protection' });
  r.use(async (ctx, next) => {
    ctx.state.door = 'admin';
    await next();
  }, requireAdmin);

  r.get('/', doc({ summary: 'Protection settings (trash, versions, link limits, antivirus)' }), async (ctx) => {
    ctx.body = await d.protection.settings.view(me(ctx));
  });
  r.patch(
    '/',
    doc({ summary: 'Change protection settings (any subset; an unknown field or a value out of range changes nothing)', body: patch }),
    async (ctx) => {
      const b = await readObject(ctx, d.maxJsonBytes);
      // Never refuses; the service gets the body itself, whose field order decides which bad field it names first.
      validate(patch, b);
      ctx.body = await d.protection.settings.patch(me(ctx), b, actorOf(ctx), reqMeta(ctx));
    },
  );
  return r;
}
