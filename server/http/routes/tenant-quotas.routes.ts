/**
 * GET /api/admin/quotas: the tenant admin's own tenant's quotas and what it uses of each (docs/tenants.md,
 * "Step 4: quotas"; read only: the platform operator sets them). Mounted in multi-tenant mode only.
 */
import Router from '@koa/router';
import type { TenantQuotas } from '../../auth';
import { requireAdmin } from '../middlewares/auth';
import { me, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: status', 'admin');

export function tenantQuotaRoutes(quotas: TenantQuotas): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.get(
    '/quotas',
    doc({
      summary: 'My tenant’s quotas and what it uses of each (`limit` null: no limit)',
      description:
        'Answers `{quotas: {bytes, files, people, links: {limit, used}, egress_share}}` (`egress_share`: percent of the public uplink, null: none). Multi-tenant mode only (`SERVICE_MULTI_TENANT=1`); every admin reads their own tenant’s (docs/tenants.md, "Step 4: quotas").',
    }),
    requireAdmin,
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { quotas: await quotas.usage(me(ctx)) };
    },
  );
  return r;
}
