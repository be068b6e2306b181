import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Protection and outgoing events. `trash_items` (owner: protection) records
 * what sits in each storage's `.service-trash/` with its original path and
 * deleter; `versions` (protection) the snapshots in `.versions/`, keyed by
 * the file's path; `av_scans` (protection) the last scan outcome per path.
 * `notifications` (events: the bell) and `webhook_deliveries` (events: the
 * delivery log) belong to the event module.
 */
export const protection = portable('20261121140000-protection', ({ schema: s, int, serial }) => [
  s
    .createTable('trash_items')
    .addColumn('id', int, serial)
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('orig_path', 'text', (c) => c.notNull())
    .addColumn('trash_rel', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('size', int, (c) => c.notNull().defaultTo(0))
    .addColumn('reason', 'text', (c) => c.notNull().defaultTo('delete'))
    .addColumn('deleted_by', int)
    .addColumn('deleted_by_email', 'text')
    .addColumn('sha256', 'text')
    .addColumn('deleted_at', 'text', (c) => c.notNull()),
  s.createIndex('trash_items_storage').on('trash_items').columns(['storage_id', 'deleted_at']),
  s.createIndex('trash_items_sha').on('trash_items').column('sha256'),
  s
    .createTable('versions')
    .addColumn('id', int, serial)
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('version_rel', 'text', (c) => c.notNull())
    .addColumn('size', int, (c) => c.notNull())
    .addColumn('mtime', int, (c) => c.notNull())
    .addColumn('created_by', int)
    .addColumn('created_at', 'text', (c) => c.notNull()),
  s.createIndex('versions_path').on('versions').columns(['storage_id', 'path', 'id']),
  s
    .createTable('av_scans')
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('signature', 'text')
    .addColumn('detail', 'text')
    .addColumn('written_at', 'text')
    .addColumn('scanned_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('av_scans_pk', ['storage_id', 'path']),
  s
    .createTable('notifications')
    .addColumn('id', int, serial)
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('read_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull()),
  s.createIndex('notifications_user').on('notifications').columns(['user_id', 'id']),
  s.createIndex('notifications_unread').on('notifications').column('user_id').where(sql.raw<boolean>('read_at IS NULL')),
  s
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
    .addColumn('response_code', int)
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s.createIndex('webhook_deliveries_target').on('webhook_deliveries').columns(['target_id', 'created_at']),
]);
