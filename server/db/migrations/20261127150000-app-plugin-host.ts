import { portable } from './kit';

/**
 * App plugins, second part (owner: plugins; docs/app-plugins.md): the lock
 * tokens the host keeps for an app's own later writes, the wake-up (`tick`)
 * bookkeeping (last wake-up per app, scheduled items already run), and
 * licences (the token an admin set per app, the store keys the admin trusts,
 * the local revocation list).
 */
export const appPluginHost = portable('20261127150000-app-plugin-host', ({ schema: s, int, serial }) => [
  s
    .createTable('app_plugin_lock_tokens')
    .addColumn('plugin', 'text', (c) => c.notNull().references('app_plugins.id').onDelete('cascade'))
    .addColumn('storage_id', int, (c) => c.notNull())
    .addColumn('rel', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('locked_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('app_plugin_lock_tokens_pk', ['plugin', 'storage_id', 'rel']),
  s
    .createTable('app_plugin_wakeups')
    .addColumn('plugin', 'text', (c) => c.primaryKey().references('app_plugins.id').onDelete('cascade'))
    .addColumn('last_at', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text'),
  s
    .createTable('app_plugin_schedule_runs')
    .addColumn('plugin', 'text', (c) => c.notNull().references('app_plugins.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('op_id', 'text')
    .addColumn('ran_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('app_plugin_schedule_runs_pk', ['plugin', 'key', 'due_at']),
  s
    .createTable('app_plugin_licenses')
    .addColumn('plugin', 'text', (c) => c.primaryKey().references('app_plugins.id').onDelete('cascade'))
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('held_status', 'text')
    .addColumn('set_by', int, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('set_at', 'text', (c) => c.notNull()),
  s
    .createTable('app_store_keys')
    .addColumn('id', int, serial)
    .addColumn('store', 'text', (c) => c.notNull())
    .addColumn('public_key_pem', 'text', (c) => c.notNull())
    .addColumn('added_by', int, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('added_at', 'text', (c) => c.notNull()),
  s.createIndex('app_store_keys_store').on('app_store_keys').column('store'),
  s
    .createTable('app_license_revocations')
    .addColumn('license_id', 'text', (c) => c.primaryKey())
    .addColumn('note', 'text')
    .addColumn('added_by', int, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('added_at', 'text', (c) => c.notNull()),
]);
