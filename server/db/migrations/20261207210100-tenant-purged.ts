import { portable } from './kit';

/**
 * Multi-tenant mode (docs/tenants.md, "Step 4: the leftovers"): `tenants.purged_at`, set on a tombstone once
 * every module's rows of that tenant are gone. A tombstone without it is purged (again) at start, so a purge
 * cut off by a restart finishes.
 */
export const tenantPurged = portable('20261207210100-tenant-purged', ({ schema: s }) => [s.alterTable('tenants').addColumn('purged_at', 'text')]);
