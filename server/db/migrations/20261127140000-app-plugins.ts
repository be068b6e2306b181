import { portable } from './kit';

/**
 * App plugins (owner: plugins; docs/app-plugins.md): the installed apps (the
 * verified manifest, code and language packs of the package, kept in the
 * database so an install is one transaction), each app's key-value storage,
 * and the publisher keys the admin trusts.
 */
export const appPlugins = portable('20261127140000-app-plugins', ({ schema: s, int, serial }) => [
  s
    .createTable('app_plugins')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('publisher', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('manifest', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('languages', 'text', (c) => c.notNull())
    .addColumn('icons', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('enabled', int, (c) => c.notNull().defaultTo(1))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('approved_hosts', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('installed_by', int, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('installed_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s
    .createTable('app_plugin_kv')
    .addColumn('plugin', 'text', (c) => c.notNull().references('app_plugins.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('app_plugin_kv_pk', ['plugin', 'key']),
  s
    .createTable('app_publisher_keys')
    .addColumn('id', int, serial)
    .addColumn('publisher', 'text', (c) => c.notNull())
    .addColumn('public_key_pem', 'text', (c) => c.notNull())
    .addColumn('added_by', int, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('added_at', 'text', (c) => c.notNull()),
  s.createIndex('app_publisher_keys_publisher').on('app_publisher_keys').column('publisher'),
]);
