import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md): a custom role's name is unique per tenant (without case, as
 * before), so two tenants may each have their "Editors". SQLite rebuilds `roles` for it (foreign keys off:
 * `users.custom_role_id` keeps its ids); PostgreSQL drops the installation-wide constraint.
 */
const rebuildSqlite = `
CREATE TABLE "roles_next" ("id" integer primary key, "name" text collate nocase not null, "permissions" text default '{}' not null, "created_at" text not null, "updated_at" text not null, "tenant_id" integer default 1 not null);
INSERT INTO roles_next (id, name, permissions, created_at, updated_at, tenant_id) SELECT id, name, permissions, created_at, updated_at, tenant_id FROM roles;
DROP TABLE roles;
ALTER TABLE roles_next RENAME TO roles`;

export const rolesPerTenant = {
  ...portable('20261207010000-roles-per-tenant', ({ schema: s, per }) => [
    per({ sqlite: rebuildSqlite, postgres: 'ALTER TABLE roles DROP CONSTRAINT roles_name_key' }),
    s.createIndex('roles_tenant_name').on('roles').columns(['tenant_id', 'name']).unique(),
  ]),
  foreignKeysOff: true,
};
