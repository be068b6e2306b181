import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Storages, access grants, the cached tree (nodes + name/text search) and sync
 * runs (owner: catalogue). Search is dialect-specific: SQLite's FTS5 trigram
 * table; on PostgreSQL a plain table under pg_trgm GIN indexes (substring
 * search) and a full-text index on the body.
 */
export const catalogue = portable('20261121100000-catalogue', ({ schema: s, int, ciText, serial, per }) => [
  s
    .createTable('storages')
    .addColumn('id', int, serial)
    .addColumn('uid', 'text', (c) => c.notNull().unique())
    .addColumn('name', ciText, (c) => c.notNull().unique())
    .addColumn('driver', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('mount_path', 'text', (c) => c.notNull().defaultTo('/'))
    .addColumn('sync_mode', 'text', (c) => c.notNull().defaultTo('poll'))
    .addColumn('sync_interval_s', int, (c) => c.notNull().defaultTo(900))
    .addColumn('enabled', int, (c) => c.notNull().defaultTo(1))
    .addColumn('read_only', int, (c) => c.notNull().defaultTo(0))
    .addColumn('rbac_enabled', int, (c) => c.notNull().defaultTo(0))
    .addColumn('replica_target_id', int)
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('unknown'))
    .addColumn('status_reason', 'text')
    .addColumn('last_sync_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s
    .createTable('storage_grants')
    .addColumn('id', int, serial)
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('user_id', int, (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('group_name', 'text')
    .addColumn('level', 'text', (c) => c.notNull().check(sql`level IN ('viewer','editor')`))
    .addCheckConstraint('storage_grants_one_grantee', sql`(user_id IS NULL) != (group_name IS NULL)`),
  s.createIndex('storage_grants_storage').on('storage_grants').column('storage_id'),
  s
    .createTable('nodes')
    .addColumn('id', int, serial)
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('dir', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type IN ('dir','file')`))
    .addColumn('size', int, (c) => c.notNull().defaultTo(0))
    .addColumn('mtime', int, (c) => c.notNull().defaultTo(0))
    .addColumn('etag', 'text')
    .addColumn('mime', 'text')
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('owner_id', int)
    .addColumn('thumb_state', 'text')
    .addColumn('thumb_error', 'text')
    .addColumn('thumb_exp', int)
    .addColumn('thumb_sig', 'text')
    .addColumn('scan_state', 'text')
    .addColumn('app_state', 'text')
    .addColumn('deleted_at', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s.createIndex('nodes_path').on('nodes').columns(['storage_id', 'path']).unique(),
  s.createIndex('nodes_listing').on('nodes').columns(['storage_id', 'dir', 'type', 'sort_key']),
  s.createIndex('nodes_owner').on('nodes').column('owner_id').where(sql.raw<boolean>('owner_id IS NOT NULL')),
  per({
    sqlite: `CREATE VIRTUAL TABLE search_fts USING fts5(name, body, tokenize = 'trigram')`,
    postgres: `CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE search_fts (rowid bigint PRIMARY KEY, name text, body text);
CREATE INDEX search_fts_name_trgm ON search_fts USING gin (name gin_trgm_ops);
CREATE INDEX search_fts_body_trgm ON search_fts USING gin (body gin_trgm_ops);
CREATE INDEX search_fts_body_words ON search_fts USING gin (to_tsvector('simple', coalesce(body, '')))`,
  }),
  s
    .createTable('sync_runs')
    .addColumn('id', int, serial)
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('full'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('added', int, (c) => c.notNull().defaultTo(0))
    .addColumn('updated', int, (c) => c.notNull().defaultTo(0))
    .addColumn('removed', int, (c) => c.notNull().defaultTo(0))
    .addColumn('errors', int, (c) => c.notNull().defaultTo(0))
    .addColumn('seen', int, (c) => c.notNull().defaultTo(0))
    .addColumn('guard_tripped', int, (c) => c.notNull().defaultTo(0))
    .addColumn('message', 'text'),
  s.createIndex('sync_runs_storage').on('sync_runs').columns(['storage_id', 'id']),
  s
    .createTable('sync_errors')
    .addColumn('id', int, serial)
    .addColumn('run_id', int, (c) => c.notNull().references('sync_runs.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull()),
  s.createIndex('sync_errors_run').on('sync_errors').column('run_id'),
]);
