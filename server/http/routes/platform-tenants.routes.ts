/**
 * /api/platform/tenants: the platform operator's tenants (docs/tenants.md, "The operator's tenant routes";
 * mounted in multi-tenant mode only). `GET` lists, `POST` creates one with its first admin (201),
 * `GET/PATCH/DELETE /:id` reads, changes (suspends and resumes with `status`) and deletes a suspended one.
 * A tenant admin gets 403 `supertenant_only` (middlewares/platform-routes.ts) before these run.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { Brandings, TenantQuotas, TenantsService } from '../../auth';
import type { Catalogue } from '../../catalogue';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate } from '../validate';
import type { AppState, Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';
import { tenantBody, tenantPatch } from './platform-tenants.schema';
import { auditOf, logoBytes, logoDoc } from './branding.routes';

const routeDocOf = routeDoc('Platform: tenants', 'admin');
const ONLY = 'Multi-tenant mode only (`SERVICE_MULTI_TENANT=1`), for the platform operator: a tenant admin gets 403 `supertenant_only` (docs/tenants.md).';
const doc = (d: Parameters<typeof routeDocOf>[0]) => routeDocOf({ description: ONLY, ...d });

export function platformTenantRoutes(d: {
  tenants: TenantsService;
  brandings: Brandings;
  quotas: TenantQuotas;
  catalogue: Catalogue;
  maxJsonBytes: number;
}): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/platform/tenants' });
  r.use(requireAdmin);
  const idOf = (ctx: Ctx): number => {
    const id = Number(ctx.params.id);
    if (!Number.isInteger(id) || id < 1) throw new AppError('bad_id');
    return id;
  };

  // What a tenant uses of its quotas, counted at the request (docs/tenants.md, "Step 4: quotas").
  const withUsage = async <T extends { id: number }>(t: T) => ({ ...t, usage: await d.quotas.used({ tenant_id: t.id }) });

  r.get('/', doc({ summary: 'Every tenant, each with `usage: {bytes, files, people, links}`: what it uses of its quotas' }), async (ctx) => {
    const tenants = [];
    for (const t of await d.tenants.list()) tenants.push(await withUsage(t));
    ctx.body = { tenants };
  });
  r.post('/', doc({ summary: 'Create a tenant with its first admin', body: tenantBody, status: 201 }), async (ctx) => {
    const b = validate(tenantBody, await readObject(ctx, d.maxJsonBytes));
    ctx.status = 201;
    ctx.body = { tenant: await d.tenants.create({ quotas: {}, branding: {}, hostnames: [], ...b }, auditOf(ctx)) };
  });
  r.get('/:id', doc({ summary: 'One tenant, with `usage: {bytes, files, people, links}`: what it uses of its quotas' }), async (ctx) => {
    ctx.body = { tenant: await withUsage(await d.tenants.get(idOf(ctx))) };
  });
  r.patch('/:id', doc({ summary: 'Change a tenant; `status` suspends or resumes it', body: tenantPatch }), async (ctx) => {
    const b = validate(tenantPatch, await readObject(ctx, d.maxJsonBytes));
    ctx.body = { tenant: await d.tenants.update(idOf(ctx), b, auditOf(ctx)) };
  });
  r.delete('/:id', doc({ summary: 'Delete a suspended tenant: its storages’ catalogue and links, its people (never the files)' }), async (ctx) => {
    const id = idOf(ctx);
    const t = await d.tenants.get(id);
    if (t.status !== 'suspended') throw new AppError('conflict', { reason: 'only a suspended tenant is deleted' }, { reason: 'not_suspended' });
    // Its storages go through their owner first (their catalogue, links and grants); the files stay on the disks.
    const scope = { tenant_id: id };
    for (const st of d.catalogue.storages.list(scope)) await d.catalogue.storages.delete(scope, st.id, auditOf(ctx));
    await d.tenants.remove(id, auditOf(ctx));
    ctx.body = { ok: true };
  });
  r.put('/:id/logo', doc({ summary: 'Set a tenant’s logo on its public pages', ...logoDoc, description: `${ONLY} ${logoDoc.description}` }), async (ctx) => {
    const scope = { tenant_id: idOf(ctx) };
    ctx.body = { branding: await d.brandings.setLogo(scope, await logoBytes(ctx), auditOf(ctx)) };
  });
  r.delete('/:id/logo', doc({ summary: 'Remove a tenant’s logo' }), async (ctx) => {
    ctx.body = { branding: await d.brandings.removeLogo({ tenant_id: idOf(ctx) }, auditOf(ctx)) };
  });
  return r;
}
