import type { Migration } from './types';

/**
 * A chunked upload whose bytes are published (the driver's complete, or the
 * staged file's write, returned) but not yet announced: a restart in that
 * window finishes it instead of leaving it `finalizing` (owner: uploads).
 */
export const uploadPublished: Migration = {
  name: '20261125094000-upload-published',
  sql: `ALTER TABLE upload_sessions ADD COLUMN published_at TEXT;`,
};
