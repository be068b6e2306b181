import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Chunked upload sessions and the parts each holds (owner: uploads). A session
 * is keyed by its unguessable id and its owner, never by a login token, so it
 * survives token expiry, a closed tab and a restart.
 */
export const uploads = portable('20261121120000-uploads', ({ schema: s, int, withoutRowid }) => [
  s
    .createTable('upload_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', int, (c) => c.notNull())
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('size', int, (c) => c.notNull())
    .addColumn('chunk_size', int, (c) => c.notNull())
    .addColumn('mime', 'text')
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode IN ('driver','staged')`))
    .addColumn('handle', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('open').check(sql`state IN ('open','finalizing')`))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull()),
  s.createIndex('upload_sessions_owner').on('upload_sessions').column('owner_id'),
  s.createIndex('upload_sessions_expiry').on('upload_sessions').column('expires_at'),
  withoutRowid(
    s
      .createTable('upload_parts')
      .addColumn('upload_id', 'text', (c) => c.notNull().references('upload_sessions.id').onDelete('cascade'))
      .addColumn('part', int, (c) => c.notNull())
      .addColumn('size', int, (c) => c.notNull())
      .addColumn('etag', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text')
      .addPrimaryKeyConstraint('upload_parts_pk', ['upload_id', 'part']),
  ),
]);
