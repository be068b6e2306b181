/** `--tenant <slug>` (docs/tenants.md, "CLI"): which tenant a command that touches tenant data works in. */
import { TenantRecordsRepo } from '../auth';
import { DEFAULT_TENANT, type Db, type TenantScope } from '../db';
import { UsageError } from './args';

/** The option as `parse` declares it. */
export const TENANT_OPTION = { tenant: { type: 'string' } } as const;

/** The tenant `slug` names (a suspended one too: the operator may mend it); tenant 1 without one; unknown → UsageError. */
export async function tenantOf(db: Db, slug: string | undefined): Promise<TenantScope> {
  if (slug === undefined) return DEFAULT_TENANT;
  const t = (await new TenantRecordsRepo(db).all()).find((r) => r.slug === slug);
  if (!t) throw new UsageError(`no tenant "${slug}"`);
  return { tenant_id: t.id };
}
