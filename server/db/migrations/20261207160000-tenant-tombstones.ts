import { portable } from './kit';

/**
 * A deleted tenant's row stays as a tombstone (`deleted_at`; owner: auth, TenantRecordsRepo.remove): SQLite
 * gives a deleted row's id to the next insert, and a new tenant must never inherit what other modules still
 * hold under the old id (audit, notifications, ops). A column, not a third `status`: the status CHECK cannot
 * be widened on SQLite without rebuilding the table (the shares migration's precedent).
 */
export const tenantTombstones = portable('20261207160000-tenant-tombstones', ({ schema: s }) => [s.alterTable('tenants').addColumn('deleted_at', 'text')]);
