import { portable } from './kit';

/**
 * Accounts and access (owner: auth). `api_keys`: keys a person (or an admin
 * for them) made, with verbs and an optional folder root, kept hashed; a
 * device pairing key is bound to its machine. `roles`: custom roles, a set of
 * permission settings over a person's built-in role; `user_permissions`: a
 * person's own exceptions. Both feed the decision order of auth/permissions.
 */
export const keysRoles = portable('20261125110000-keys-roles', ({ schema: s, int, ciText, serial, withoutRowid }) => [
  s
    .createTable('api_keys')
    .addColumn('id', int, serial)
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('verbs', 'text', (c) => c.notNull())
    .addColumn('root_storage_id', int, (c) => c.references('storages.id').onDelete('cascade'))
    .addColumn('root_rel', 'text')
    .addColumn('machine_id', 'text')
    .addColumn('created_by', int)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('last_used_ip', 'text')
    .addColumn('revoked_at', 'text'),
  s.createIndex('api_keys_user').on('api_keys').column('user_id'),
  s
    .createTable('roles')
    .addColumn('id', int, serial)
    .addColumn('name', ciText, (c) => c.notNull().unique())
    .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s.alterTable('users').addColumn('custom_role_id', int, (c) => c.references('roles.id').onDelete('set null')),
  withoutRowid(
    s
      .createTable('user_permissions')
      .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('permission', 'text', (c) => c.notNull())
      .addColumn('allowed', int, (c) => c.notNull())
      .addPrimaryKeyConstraint('user_permissions_pk', ['user_id', 'permission']),
  ),
]);
