import type { Migration } from './types';

/**
 * Protection and outgoing events. `trash_items` (owner: protection) records
 * what sits in each storage's `.service-trash/` with its original path and
 * deleter; `versions` (protection) the snapshots in `.versions/`, keyed by
 * the file's path; `av_scans` (protection) the last scan outcome per path.
 * `notifications` (events: the bell) and `webhook_deliveries` (events: the
 * delivery log) belong to the event module.
 */
export const protection: Migration = {
  name: '20261121140000-protection',
  sql: `
CREATE TABLE trash_items (
  id INTEGER PRIMARY KEY,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  orig_path TEXT NOT NULL,
  trash_rel TEXT NOT NULL,
  type TEXT NOT NULL,
  size INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT 'delete',
  deleted_by INTEGER,
  deleted_by_email TEXT,
  sha256 TEXT,
  deleted_at TEXT NOT NULL
);
CREATE INDEX trash_items_storage ON trash_items(storage_id, deleted_at);
CREATE INDEX trash_items_sha ON trash_items(sha256);
CREATE TABLE versions (
  id INTEGER PRIMARY KEY,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  version_rel TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime INTEGER NOT NULL,
  created_by INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX versions_path ON versions(storage_id, path, id);
CREATE TABLE av_scans (
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  state TEXT NOT NULL,
  signature TEXT,
  detail TEXT,
  written_at TEXT,
  scanned_at TEXT NOT NULL,
  PRIMARY KEY (storage_id, path)
);
CREATE TABLE notifications (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  severity TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  data TEXT NOT NULL DEFAULT '{}',
  read_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX notifications_user ON notifications(user_id, id);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  target_id TEXT NOT NULL,
  url TEXT NOT NULL,
  event TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  response_code INTEGER,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_target ON webhook_deliveries(target_id, created_at);
`,
};
