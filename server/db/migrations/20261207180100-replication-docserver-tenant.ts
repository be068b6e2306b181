import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md, "Step 1: replication, NFS exports, document server"): the
 * replication tables, `nfs_exports` and `docserver_saves` are scoped. Every row kept the column's default
 * (tenant 1) whatever its owner's tenant; each takes its owner's: a failure its storage's, a save its node's,
 * a target the tenant of the first storage linked to it (targets were the installation's). A storage linked
 * to a target of another tenant is unlinked (a tenant's storage backs up only to its tenant's targets). Rules
 * have no owning row and stay tenant 1's. NFS exports were stored with their tenant already. A target's name
 * is unique per tenant (SQLite rebuilds `replica_targets`: nothing references it; PostgreSQL drops the
 * installation-wide constraint).
 */
const TARGET_COLUMNS = 'id, uid, name, driver, config, mode, enabled, created_at, updated_at, tenant_id';

const rebuildSqlite = `
CREATE TABLE "replica_targets_next" ("id" integer primary key, "uid" text not null unique, "name" text not null, "driver" text not null, "config" text default '{}' not null, "mode" text default 'async' not null check (mode IN ('async', 'sync')), "enabled" integer default 1 not null, "created_at" text not null, "updated_at" text not null, "tenant_id" integer default 1 not null);
INSERT INTO replica_targets_next (${TARGET_COLUMNS}) SELECT ${TARGET_COLUMNS} FROM replica_targets;
DROP TABLE replica_targets;
ALTER TABLE replica_targets_next RENAME TO replica_targets`;

export const replicationDocserverTenant = portable('20261207180100-replication-docserver-tenant', ({ schema: s, per }) => [
  `UPDATE replica_targets SET tenant_id = (SELECT s.tenant_id FROM storages s WHERE s.replica_target_id = replica_targets.id ORDER BY s.id LIMIT 1)
    WHERE EXISTS (SELECT 1 FROM storages s WHERE s.replica_target_id = replica_targets.id)`,
  `UPDATE storages SET replica_target_id = NULL
    WHERE replica_target_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM replica_targets t WHERE t.id = storages.replica_target_id AND t.tenant_id = storages.tenant_id)`,
  'UPDATE replica_failures SET tenant_id = s.tenant_id FROM storages s WHERE s.id = replica_failures.storage_id AND replica_failures.tenant_id <> s.tenant_id',
  'UPDATE docserver_saves SET tenant_id = n.tenant_id FROM nodes n WHERE n.id = docserver_saves.node_id AND docserver_saves.tenant_id <> n.tenant_id',
  per({ sqlite: rebuildSqlite, postgres: 'ALTER TABLE replica_targets DROP CONSTRAINT replica_targets_name_key' }),
  s.createIndex('replica_targets_tenant_name').on('replica_targets').columns(['tenant_id', 'name']).unique(),
]);
