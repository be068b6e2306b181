import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md): an op's dedup key is unique among the live ops of its tenant,
 * not of the installation, so the same key in two tenants (a drain, a backup) makes one op in each and an
 * enqueue never collides with an op it cannot read. `ops_dedup` leads with the tenant.
 */
export const opsDedupPerTenant = portable('20261207110200-ops-dedup-per-tenant', ({ schema: s }) => [
  s.dropIndex('ops_dedup'),
  s
    .createIndex('ops_dedup')
    .on('ops')
    .columns(['tenant_id', 'dedup_key'])
    .unique()
    .where(sql.raw<boolean>(`dedup_key IS NOT NULL AND status IN ('queued','running')`)),
]);
