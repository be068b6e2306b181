/**
 * The tenants' part of the composition root (docs/tenants.md): the directory a request selects its tenant
 * from (multi-tenant mode), every tenant's branding, the purge of deleted tenants, the operator's service
 * and the quotas. What it counts against (the catalogue, the links) is built after it: asked at call time.
 */
import { TenantPurgeRepo, type ChangeChannel, type Db, type TenantScope } from './db';
import type { EventBus } from './events';
import type { JobQueue } from './jobs';
import { Brandings, TenantDirectory, TenantLogosRepo, TenantPurge, TenantQuotas, TenantRecordsRepo, TenantsService, type createAuth } from './auth';

export interface TenantsDeps {
  multiTenant: boolean;
  db: Db;
  channel: ChangeChannel;
  bus: EventBus;
  queue: JobQueue;
  auth: ReturnType<typeof createAuth>;
  /** A tenant's bytes and files (the catalogue's usage). */
  storage: ConstructorParameters<typeof TenantQuotas>[2]['storage'];
  /** A tenant's live links. */
  links: (t: TenantScope) => Promise<number>;
}

export async function composeTenants(d: TenantsDeps) {
  // Multi-tenant mode: the tenants a request selects by host or prefix, held in memory.
  const records = new TenantRecordsRepo(d.db);
  const tenants = d.multiTenant ? new TenantDirectory(records) : null;
  if (tenants) {
    await tenants.load();
    tenants.attachChannel(d.channel);
  }
  // Every tenant's branding of its public pages (tenant 1's in single-tenant mode), held in memory too.
  const brandings = new Brandings(records, new TenantLogosRepo(d.db), d.bus);
  await brandings.load();
  brandings.attachChannel(d.channel);
  // A deleted tenant's rows in every module, removed by an op after the delete (also after a restart).
  const tenantPurge = new TenantPurge({ repo: new TenantPurgeRepo(d.db), records, queue: d.queue });
  tenantPurge.register();
  const platformTenants = tenants ? new TenantsService(records, tenants, d.auth.users, d.bus, brandings, tenantPurge) : null;
  // Quotas per tenant (docs/tenants.md, "Step 4: quotas"): read from the directory, counted from the catalogue,
  // the people and the links. Single-tenant mode checks none.
  const quotas = tenants ? new TenantQuotas((t) => tenants.byId(t.tenant_id)?.quotas, d.auth.repo, { storage: d.storage, links: d.links }) : null;
  if (quotas) d.auth.users.limitPeople((t) => quotas.limit(t, 'people'));
  return { tenants, brandings, tenantPurge, platformTenants, quotas };
}
