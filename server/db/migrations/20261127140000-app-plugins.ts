import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Migration } from './types';

// Built with Kysely's schema builder (compiled only: migrations are applied as SQL text at boot).
const k = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

/**
 * App plugins (owner: plugins; docs/app-plugins.md): the installed apps (the
 * verified manifest, code and language packs of the package, kept in the
 * database so an install is one transaction), each app's key-value storage,
 * and the publisher keys the admin trusts.
 */
export const appPlugins: Migration = {
  name: '20261127140000-app-plugins',
  sql: [
    k.schema
      .createTable('app_plugins')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('publisher', 'text', (c) => c.notNull())
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('manifest', 'text', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('languages', 'text', (c) => c.notNull())
      .addColumn('icons', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('approved_hosts', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('installed_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('installed_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull()),
    k.schema
      .createTable('app_plugin_kv')
      .addColumn('plugin', 'text', (c) => c.notNull().references('app_plugins.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('app_plugin_kv_pk', ['plugin', 'key']),
    k.schema
      .createTable('app_publisher_keys')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('publisher', 'text', (c) => c.notNull())
      .addColumn('public_key_pem', 'text', (c) => c.notNull())
      .addColumn('added_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('added_at', 'text', (c) => c.notNull()),
    k.schema.createIndex('app_publisher_keys_publisher').on('app_publisher_keys').column('publisher'),
  ]
    .map((q) => q.compile().sql)
    .join(';\n'),
};
