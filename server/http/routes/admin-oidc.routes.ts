/**
 * Admin: GET/PUT /api/admin/auth/oidc (the OIDC sign-in settings; the client
 * secret is write-only and reads `***`) and POST /api/admin/auth/oidc/test
 * (discovery against the issuer with the form's values, nothing saved).
 * PUT saves only after discovery worked; a field set by SERVICE_OIDC_* may
 * only be sent unchanged.
 */
import Router from '@koa/router';
import type { Oidc } from '../../auth';
import { requireAdmin } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { validate, z } from '../validate';
import { actorOf, reqMeta, selfUrl, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: sign-in', 'admin');

const claim = z.string().max(128);
const patch = z
  .object({
    enabled: z.boolean(),
    issuer: z.string().max(2048),
    client_id: z.string().max(256),
    client_secret: z.string().max(4096),
    scopes: z.string().max(1024),
    email_claim: claim,
    username_claim: claim,
    groups_claim: claim,
    admin_group: z.string().max(64),
    redirect_url: z.string().max(2048),
    label: z.string().max(64),
  })
  .partial()
  .strict();

export function adminOidcRoutes(d: { oidc: Oidc; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/auth/oidc' });
  r.use(async (ctx, next) => {
    ctx.state.door = 'admin';
    await next();
  }, requireAdmin);

  r.get('/', doc({ summary: 'Single sign-on settings (the client secret reads back as ***)' }), (ctx) => {
    ctx.body = d.oidc.config.view(selfUrl(ctx));
  });
  r.put('/', doc({ summary: 'Change single sign-on settings', body: patch }), async (ctx) => {
    const b = validate(patch, await readObject(ctx, d.maxJsonBytes));
    ctx.body = await d.oidc.config.update(b, selfUrl(ctx), { actor: actorOf(ctx), request: reqMeta(ctx) });
  });
  r.post('/test', doc({ summary: 'Try single sign-on settings without saving them (discovery at the issuer)', body: patch }), async (ctx) => {
    const b = validate(patch, await readObject(ctx, d.maxJsonBytes));
    ctx.body = await d.oidc.config.test(b);
  });
  return r;
}
