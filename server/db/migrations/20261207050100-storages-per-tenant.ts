import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md): a storage's name is unique per tenant (without case, as
 * before), so two tenants may each have their "Photos". Its uid stays unique across the installation: it is
 * random, and a driver, the meter and replication know a storage by its uid alone. SQLite rebuilds
 * `storages` for it (foreign keys off: the rows of every table referencing it keep their ids; the share
 * tombstones' trigger goes with the old table and is made again); PostgreSQL drops the installation-wide
 * constraint. `storages_tenant_name` becomes unique.
 */
const COLUMNS =
  'id, uid, name, driver, config, mount_path, sync_mode, sync_interval_s, enabled, read_only, rbac_enabled, replica_target_id, status, status_reason, last_sync_at, created_at, updated_at, volume, ocr, tenant_id';

const rebuildSqlite = `
CREATE TABLE "storages_next" ("id" integer primary key, "uid" text not null unique, "name" text collate nocase not null, "driver" text not null, "config" text default '{}' not null, "mount_path" text default '/' not null, "sync_mode" text default 'poll' not null, "sync_interval_s" integer default 900 not null, "enabled" integer default 1 not null, "read_only" integer default 0 not null, "rbac_enabled" integer default 0 not null, "replica_target_id" integer, "status" text default 'unknown' not null, "status_reason" text, "last_sync_at" text, "created_at" text not null, "updated_at" text not null, "volume" text, "ocr" integer default 0 not null, "tenant_id" integer default 1 not null);
INSERT INTO storages_next (${COLUMNS}) SELECT ${COLUMNS} FROM storages;
DROP TABLE storages;
ALTER TABLE storages_next RENAME TO storages;
CREATE TRIGGER share_tombstones_storage_gone BEFORE DELETE ON storages
BEGIN
  INSERT OR REPLACE INTO share_tombstones (token, kind, reason, created_at)
    SELECT token, kind, 'storage_removed', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM shares WHERE storage_id = OLD.id;
END`;

export const storagesPerTenant = {
  ...portable('20261207050100-storages-per-tenant', ({ schema: s, per }) => [
    s.dropIndex('storages_tenant_name'),
    per({ sqlite: rebuildSqlite, postgres: 'ALTER TABLE storages DROP CONSTRAINT storages_name_key' }),
    s.createIndex('storages_tenant_name').on('storages').columns(['tenant_id', 'name']).unique(),
  ]),
  foreignKeysOff: true,
};
