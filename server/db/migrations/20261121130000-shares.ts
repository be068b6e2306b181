import type { Migration } from './types';

/**
 * Public links (owner: shares). A share points at a storage by id plus a
 * relative path, so renaming the storage keeps its links. `owner_id` has no
 * foreign key on purpose: a deleted creator leaves the row, which then reads
 * as `revoked`. The PIN is kept as an HMAC only; its failure counter and lock
 * live on the row so they survive a restart. `downloads` / `uploads` are
 * slots claimed with one conditional UPDATE each, which keeps caps exact.
 */
export const shares: Migration = {
  name: '20261121130000-shares',
  sql: `
CREATE TABLE shares (
  id INTEGER PRIMARY KEY,
  token TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL DEFAULT 'link' CHECK (kind IN ('link','drop')),
  owner_id INTEGER NOT NULL,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  rel TEXT NOT NULL,
  is_dir INTEGER NOT NULL DEFAULT 0,
  ttl TEXT,
  expires_at TEXT,
  expiry_clamped INTEGER NOT NULL DEFAULT 0,
  max_downloads INTEGER,
  downloads INTEGER NOT NULL DEFAULT 0,
  max_uploads INTEGER,
  uploads INTEGER NOT NULL DEFAULT 0,
  pin_hash TEXT,
  pin_fails INTEGER NOT NULL DEFAULT 0,
  locked_until TEXT,
  comment TEXT,
  drop_settings TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX shares_owner ON shares(owner_id);
CREATE INDEX shares_expiry ON shares(expires_at);
CREATE TABLE drop_submissions (
  id TEXT PRIMARY KEY,
  share_id INTEGER NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
  folder TEXT NOT NULL,
  uploader TEXT,
  ip TEXT,
  files INTEGER NOT NULL DEFAULT 0,
  has_note INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX drop_submissions_share ON drop_submissions(share_id);
CREATE TABLE drop_files (
  upload_id TEXT PRIMARY KEY,
  submission_id TEXT NOT NULL REFERENCES drop_submissions(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  done INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX drop_files_submission ON drop_files(submission_id);
`,
};
