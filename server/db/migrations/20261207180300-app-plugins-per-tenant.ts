import { portable } from './kit';

/**
 * Multi-tenant mode, step 1, apps (docs/tenants.md, "Step 1: apps"): an app is installed per tenant, so the
 * same app id may be installed in two tenants with its own settings, key-value storage, licence, lock tokens
 * and schedule. Every app table's key leads with `tenant_id` (the column exists since the tenants migration,
 * every row tenant 1's), and the children reference their app by `(tenant_id, id)`, so removing one tenant's
 * app cascades to its rows only. SQLite rebuilds the six tables (foreign keys off, checked before commit);
 * PostgreSQL swaps the keys in place.
 */
const APP =
  'id, version, publisher, digest, manifest, code, languages, icons, enabled, settings, approved_hosts, installed_by, installed_at, updated_at, tenant_id';
const KV = 'plugin, key, value, updated_at, tenant_id';
const LOCKS = 'plugin, storage_id, rel, token, locked_at, tenant_id';
const WAKEUPS = 'plugin, last_at, outcome, tenant_id';
const RUNS = 'plugin, key, due_at, op_id, ran_at, tenant_id';
const LICENCES = 'plugin, token, held_status, set_by, set_at, tenant_id';
const parent = 'foreign key ("tenant_id", "plugin") references "app_plugins" ("tenant_id", "id") on delete cascade';

const rebuilt: Array<[string, string, string]> = [
  [
    'app_plugins',
    APP,
    `"id" text not null, "version" text not null, "publisher" text not null, "digest" text not null, "manifest" text not null, "code" text not null, "languages" text not null, "icons" text default '{}' not null, "enabled" integer default 1 not null, "settings" text default '{}' not null, "approved_hosts" text default '[]' not null, "installed_by" integer references "users" ("id") on delete set null, "installed_at" text not null, "updated_at" text not null, "tenant_id" integer default 1 not null, primary key ("tenant_id", "id")`,
  ],
  [
    'app_plugin_kv',
    KV,
    `"plugin" text not null, "key" text not null, "value" text not null, "updated_at" text not null, "tenant_id" integer default 1 not null, constraint "app_plugin_kv_pk" primary key ("tenant_id", "plugin", "key"), ${parent}`,
  ],
  [
    'app_plugin_lock_tokens',
    LOCKS,
    `"plugin" text not null, "storage_id" integer not null, "rel" text not null, "token" text not null, "locked_at" text not null, "tenant_id" integer default 1 not null, constraint "app_plugin_lock_tokens_pk" primary key ("tenant_id", "plugin", "storage_id", "rel"), ${parent}`,
  ],
  [
    'app_plugin_wakeups',
    WAKEUPS,
    `"plugin" text not null, "last_at" text not null, "outcome" text, "tenant_id" integer default 1 not null, primary key ("tenant_id", "plugin"), ${parent}`,
  ],
  [
    'app_plugin_schedule_runs',
    RUNS,
    `"plugin" text not null, "key" text not null, "due_at" text not null, "op_id" text, "ran_at" text not null, "tenant_id" integer default 1 not null, constraint "app_plugin_schedule_runs_pk" primary key ("tenant_id", "plugin", "key", "due_at"), ${parent}`,
  ],
  [
    'app_plugin_licenses',
    LICENCES,
    `"plugin" text not null, "token" text not null, "held_status" text, "set_by" integer references "users" ("id") on delete set null, "set_at" text not null, "tenant_id" integer default 1 not null, primary key ("tenant_id", "plugin"), ${parent}`,
  ],
];

const rebuildSqlite = [
  ...rebuilt.map(([t, cols, def]) => `CREATE TABLE "${t}_next" (${def});\nINSERT INTO ${t}_next (${cols}) SELECT ${cols} FROM ${t}`),
  ...rebuilt.map(([t]) => `DROP TABLE ${t}`),
  ...rebuilt.map(([t]) => `ALTER TABLE ${t}_next RENAME TO ${t}`),
].join(';\n');

/** The children and the key each gets (PostgreSQL: the old foreign keys are the column's default names). */
const children: Array<[string, string, string]> = [
  ['app_plugin_kv', 'app_plugin_kv_pk', 'tenant_id, plugin, key'],
  ['app_plugin_lock_tokens', 'app_plugin_lock_tokens_pk', 'tenant_id, plugin, storage_id, rel'],
  ['app_plugin_wakeups', 'app_plugin_wakeups_pkey', 'tenant_id, plugin'],
  ['app_plugin_schedule_runs', 'app_plugin_schedule_runs_pk', 'tenant_id, plugin, key, due_at'],
  ['app_plugin_licenses', 'app_plugin_licenses_pkey', 'tenant_id, plugin'],
];

const alterPostgres = [
  ...children.map(([t]) => `ALTER TABLE ${t} DROP CONSTRAINT ${t}_plugin_fkey`),
  'ALTER TABLE app_plugins DROP CONSTRAINT app_plugins_pkey, ADD CONSTRAINT app_plugins_pkey PRIMARY KEY (tenant_id, id)',
  ...children.map(
    ([t, pk, cols]) =>
      `ALTER TABLE ${t} DROP CONSTRAINT ${pk}, ADD CONSTRAINT ${pk} PRIMARY KEY (${cols}), ADD CONSTRAINT ${t}_plugin_fkey FOREIGN KEY (tenant_id, plugin) REFERENCES app_plugins (tenant_id, id) ON DELETE CASCADE`,
  ),
].join(';\n');

export const appPluginsPerTenant = {
  ...portable('20261207180300-app-plugins-per-tenant', ({ per }) => [per({ sqlite: rebuildSqlite, postgres: alterPostgres })]),
  foreignKeysOff: true,
};
