import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Public links (owner: shares). A share points at a storage by id plus a
 * relative path, so renaming the storage keeps its links. `owner_id` has no
 * foreign key on purpose: a deleted creator leaves the row, which then reads
 * as `revoked`. The PIN is kept as an HMAC only; its failure counter and lock
 * live on the row so they survive a restart. `downloads` / `uploads` are
 * slots claimed with one conditional UPDATE each, which keeps caps exact.
 */
export const shares = portable('20261121130000-shares', ({ schema: s, int, serial }) => [
  s
    .createTable('shares')
    .addColumn('id', int, serial)
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('link').check(sql`kind IN ('link','drop')`))
    .addColumn('owner_id', int, (c) => c.notNull())
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('rel', 'text', (c) => c.notNull())
    .addColumn('is_dir', int, (c) => c.notNull().defaultTo(0))
    .addColumn('ttl', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('expiry_clamped', int, (c) => c.notNull().defaultTo(0))
    .addColumn('max_downloads', int)
    .addColumn('downloads', int, (c) => c.notNull().defaultTo(0))
    .addColumn('max_uploads', int)
    .addColumn('uploads', int, (c) => c.notNull().defaultTo(0))
    .addColumn('pin_hash', 'text')
    .addColumn('pin_fails', int, (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'text')
    .addColumn('comment', 'text')
    .addColumn('drop_settings', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull()),
  s.createIndex('shares_owner').on('shares').column('owner_id'),
  s.createIndex('shares_expiry').on('shares').column('expires_at'),
  s
    .createTable('drop_submissions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('share_id', int, (c) => c.notNull().references('shares.id').onDelete('cascade'))
    .addColumn('folder', 'text', (c) => c.notNull())
    .addColumn('uploader', 'text')
    .addColumn('ip', 'text')
    .addColumn('files', int, (c) => c.notNull().defaultTo(0))
    .addColumn('has_note', int, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text'),
  s.createIndex('drop_submissions_share').on('drop_submissions').column('share_id'),
  s
    .createTable('drop_files')
    .addColumn('upload_id', 'text', (c) => c.primaryKey())
    .addColumn('submission_id', 'text', (c) => c.notNull().references('drop_submissions.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('size', int, (c) => c.notNull())
    .addColumn('done', int, (c) => c.notNull().defaultTo(0)),
  s.createIndex('drop_files_submission').on('drop_files').column('submission_id'),
]);
