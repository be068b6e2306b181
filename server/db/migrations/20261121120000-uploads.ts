import type { Migration } from './types';

/**
 * Chunked upload sessions and the parts each holds (owner: uploads). A session
 * is keyed by its unguessable id and its owner, never by a login token, so it
 * survives token expiry, a closed tab and a restart.
 */
export const uploads: Migration = {
  name: '20261121120000-uploads',
  sql: `
CREATE TABLE upload_sessions (
  id TEXT PRIMARY KEY,
  owner_id INTEGER NOT NULL,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  chunk_size INTEGER NOT NULL,
  mime TEXT,
  mode TEXT NOT NULL CHECK (mode IN ('driver','staged')),
  handle TEXT,
  state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open','finalizing')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX upload_sessions_owner ON upload_sessions(owner_id);
CREATE INDEX upload_sessions_expiry ON upload_sessions(expires_at);
CREATE TABLE upload_parts (
  upload_id TEXT NOT NULL REFERENCES upload_sessions(id) ON DELETE CASCADE,
  part INTEGER NOT NULL,
  size INTEGER NOT NULL,
  etag TEXT NOT NULL,
  sha256 TEXT,
  PRIMARY KEY (upload_id, part)
) WITHOUT ROWID;
`,
};
