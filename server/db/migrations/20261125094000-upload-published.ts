import { portable } from './kit';

/**
 * A chunked upload whose bytes are published (the driver's complete, or the
 * staged file's write, returned) but not yet announced: a restart in that
 * window finishes it instead of leaving it `finalizing` (owner: uploads).
 */
export const uploadPublished = portable('20261125094000-upload-published', ({ schema: s }) => [
  s.alterTable('upload_sessions').addColumn('published_at', 'text'),
]);
