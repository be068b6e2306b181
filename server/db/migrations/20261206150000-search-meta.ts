import { sql } from 'kysely';
import { portable } from './kit';

/** Pictures, audio and video as the metadata reader knew them at this migration (fulltext/media-meta.ts). */
const MEDIA = 'jpg jpeg png tif tiff webp mp3 m4a aac flac ogg oga opus wav wma mp4 m4v mov mkv webm avi 3gp wmv'.split(' ');

/**
 * Photo, audio and video metadata in search (owner: catalogue; docs/fulltext.md, "Photo, audio and video
 * metadata"): `search_fts.meta` holds a file's metadata text beside its `body`, searched with it, so a hit
 * there answers `match: "metadata"`; `text_extracts.taken` is the date taken (epoch ms) the `taken_from` /
 * `taken_to` filters read, indexed where set. SQLite cannot add a column to an FTS5 table: it is rebuilt
 * (every name and body indexed again, once). Existing pictures, audio and video files wait for their
 * metadata (a picture read by OCR already is read again, its metadata with it); the server's drain at start
 * takes them.
 */
export const searchMeta = portable('20261206150000-search-meta', ({ schema: s, int, per }) => [
  per({
    sqlite: `CREATE VIRTUAL TABLE search_fts_next USING fts5(name, body, meta, tokenize = 'trigram');
INSERT INTO search_fts_next (rowid, name, body) SELECT rowid, name, body FROM search_fts;
DROP TABLE search_fts;
ALTER TABLE search_fts_next RENAME TO search_fts`,
    postgres: `ALTER TABLE search_fts ADD COLUMN meta text;
CREATE INDEX search_fts_meta_trgm ON search_fts USING gin (meta gin_trgm_ops)`,
  }),
  s.alterTable('text_extracts').addColumn('taken', int),
  s.createIndex('text_extracts_taken').on('text_extracts').column('taken').where(sql.ref('taken'), 'is not', null),
  `INSERT INTO text_extracts (node_id, state, size, mtime, updated_at)
SELECT id, 'pending', size, mtime, '2026-12-06T15:00:00.000Z' FROM nodes
WHERE type = 'file' AND deleted_at IS NULL AND size > 0
  AND ('/' || path || '/') NOT LIKE '%/.service-%' AND ('/' || path || '/') NOT LIKE '%/.versions/%' AND name NOT LIKE '.~fd-%'
  AND (${MEDIA.map((e) => `lower(name) LIKE '%.${e}'`).join(' OR ')})
ON CONFLICT (node_id) DO UPDATE SET state = 'pending', reason = NULL`,
]);
