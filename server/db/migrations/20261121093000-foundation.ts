import { sql } from 'kysely';
import { portable } from './kit';

/** Accounts, sessions, audit, the op queue, cron state, the outbox, settings and instance facts. */
export const foundation = portable('20261121093000-foundation', ({ schema: s, int, real, ciText, serial, per }) => [
  per({ sqlite: '', postgres: 'CREATE EXTENSION IF NOT EXISTS citext' }),
  s
    .createTable('users')
    .addColumn('id', int, serial)
    .addColumn('email', ciText, (c) => c.notNull().unique())
    .addColumn('username', ciText, (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role IN ('admin','user','viewer')`))
    .addColumn('disabled', int, (c) => c.notNull().defaultTo(0))
    .addColumn('language', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('auth_driver', 'text', (c) => c.notNull().defaultTo('local'))
    .addColumn('quota_bytes', int)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s
    .createTable('groups')
    .addColumn('id', int, serial)
    .addColumn('name', 'text', (c) => c.notNull().unique()),
  s
    .createTable('user_groups')
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('group_id', int, (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('user_groups_pk', ['user_id', 'group_id']),
  s
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('login'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('ua', 'text'),
  s.createIndex('sessions_user').on('sessions').column('user_id'),
  s
    .createTable('device_keys')
    .addColumn('id', int, serial)
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text'),
  s
    .createTable('audit')
    .addColumn('id', int, serial)
    .addColumn('ts', 'text', (c) => c.notNull())
    .addColumn('user_id', int)
    .addColumn('user_email', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('resource', 'text')
    .addColumn('ip', 'text')
    .addColumn('ua', 'text')
    .addColumn('meta', 'text', (c) => c.notNull().defaultTo('{}')),
  s.createIndex('audit_ts').on('audit').column('ts'),
  s.createIndex('audit_action').on('audit').columns(['action', 'ts']),
  s.createIndex('audit_user').on('audit').columns(['user_id', 'ts']),
  s
    .createTable('ops')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', int, (c) => c.notNull().defaultTo(0))
    .addColumn('payload', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('owner_id', int)
    .addColumn('visible', int, (c) => c.notNull().defaultTo(0))
    .addColumn('dedup_key', 'text')
    .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', int, (c) => c.notNull().defaultTo(1))
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('progress', real, (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_done', int, (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_total', int, (c) => c.notNull().defaultTo(0))
    .addColumn('message', 'text')
    .addColumn('result', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_params', 'text')
    .addColumn('error_text', 'text')
    .addColumn('cancel_requested', int, (c) => c.notNull().defaultTo(0))
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s.createIndex('ops_ready').on('ops').columns(['status', 'priority desc', 'run_at']),
  s.createIndex('ops_dedup').on('ops').column('dedup_key').unique().where(sql.raw<boolean>(`dedup_key IS NOT NULL AND status IN ('queued','running')`)),
  s.createIndex('ops_owner').on('ops').columns(['owner_id', 'created_at']),
  s
    .createTable('cron_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('last_run_at', 'text', (c) => c.notNull()),
  s
    .createTable('outbox')
    .addColumn('id', int, serial)
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text'),
  s.createIndex('outbox_pending').on('outbox').column('id').where(sql.raw<boolean>('published_at IS NULL')),
  s
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s
    .createTable('meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull()),
]);
