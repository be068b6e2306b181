import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md): the `tenants` table with tenant 1 (`default`), and
 * `tenant_id INTEGER NOT NULL DEFAULT 1` on every tenant-owned table (tenant-tables.ts), so every
 * existing row is tenant 1's. No foreign key to `tenants`: SQLite adds a referencing column only with a
 * NULL default, and a tenant's rows are removed by its deletion, not by a cascade. Names unique per tenant
 * (e-mail and username, group names) need SQLite's table rebuild (the migration runs with foreign keys
 * off, checked before it commits); PostgreSQL drops the old constraints. Indexes lead with `tenant_id`
 * where a query lists by tenant.
 */
const USERS_COLUMNS = 'id, email, username, role, disabled, language, password_hash, auth_driver, quota_bytes, created_at, updated_at, custom_role_id';

const rebuildSqlite = `
CREATE TABLE "users_next" ("id" integer primary key, "email" text collate nocase not null, "username" text collate nocase not null, "role" text not null check (role IN ('admin','user','viewer')), "disabled" integer default 0 not null, "language" text, "password_hash" text, "auth_driver" text default 'local' not null, "quota_bytes" integer, "created_at" text not null, "updated_at" text not null, "custom_role_id" integer references "roles" ("id") on delete set null, "tenant_id" integer default 1 not null);
INSERT INTO users_next (${USERS_COLUMNS}) SELECT ${USERS_COLUMNS} FROM users;
DROP TABLE users;
ALTER TABLE users_next RENAME TO users;
CREATE TABLE "groups_next" ("id" integer primary key, "name" text not null, "tenant_id" integer default 1 not null);
INSERT INTO groups_next (id, name) SELECT id, name FROM groups;
DROP TABLE groups;
ALTER TABLE groups_next RENAME TO groups`;

const alterPostgres = `
ALTER TABLE users ADD COLUMN tenant_id bigint DEFAULT 1 NOT NULL;
ALTER TABLE users DROP CONSTRAINT users_email_key;
ALTER TABLE users DROP CONSTRAINT users_username_key;
ALTER TABLE groups ADD COLUMN tenant_id bigint DEFAULT 1 NOT NULL;
ALTER TABLE groups DROP CONSTRAINT groups_name_key`;

/** The tenant-owned tables as of this migration (frozen here: tenant-tables.ts may grow, an applied migration may not). */
const OWNED = `users groups user_groups sessions api_keys roles user_permissions oidc_pending oidc_links mfa_totp mfa_recovery_codes
mfa_passkeys mfa_challenges ssh_keys audit ops op_journal outbox notifications webhook_deliveries storages storage_grants nodes
node_removals file_locks text_extracts storage_requests storage_budgets sync_runs sync_errors upload_sessions upload_parts shares
share_tombstones link_streams link_visitors link_strikes drop_submissions drop_files trash_items versions av_scans dav_props
nfs_exports docserver_saves replica_targets replica_rules replica_failures assistant_conversations assistant_steps assistant_prefs
app_plugins app_plugin_kv app_plugin_lock_tokens app_plugin_wakeups app_plugin_schedule_runs app_plugin_licenses vaults
encrypted_folders encrypted_folder_keys encrypted_thumbs`.split(/\s+/);
const REBUILT = new Set(['users', 'groups']);

export const tenants = {
  ...portable('20261206220000-tenants', ({ schema: s, int, serial, per }) => [
    s
      .createTable('tenants')
      .addColumn('id', int, serial)
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hostnames', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status IN ('active','suspended')`))
      .addColumn('quotas', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('branding', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('created_at', 'text', (c) => c.notNull()),
    per({
      sqlite: `INSERT INTO tenants (id, slug, name, created_at) VALUES (1, 'default', 'Default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`,
      postgres: `INSERT INTO tenants (id, slug, name, created_at) VALUES (1, 'default', 'Default', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
SELECT setval(pg_get_serial_sequence('tenants', 'id'), 1)`,
    }),
    per({ sqlite: rebuildSqlite, postgres: alterPostgres }),
    ...OWNED.filter((t) => !REBUILT.has(t)).map((t) => s.alterTable(t).addColumn('tenant_id', int, (c) => c.notNull().defaultTo(1))),
    s.createIndex('users_tenant_email').on('users').columns(['tenant_id', 'email']).unique(),
    s.createIndex('users_tenant_username').on('users').columns(['tenant_id', 'username']).unique(),
    s.createIndex('groups_tenant_name').on('groups').columns(['tenant_id', 'name']).unique(),
    s.createIndex('api_keys_tenant_user').on('api_keys').columns(['tenant_id', 'user_id']),
    s.createIndex('sessions_tenant_user').on('sessions').columns(['tenant_id', 'user_id']),
    s.createIndex('storages_tenant_name').on('storages').columns(['tenant_id', 'name']),
    s.createIndex('shares_tenant_owner').on('shares').columns(['tenant_id', 'owner_id']),
    s.createIndex('audit_tenant').on('audit').columns(['tenant_id', 'id']),
    s.createIndex('ops_tenant').on('ops').columns(['tenant_id', 'created_at']),
    s.createIndex('outbox_tenant').on('outbox').columns(['tenant_id', 'id']),
  ]),
  foreignKeysOff: true,
};
