import type { Migration } from './types';

/** Storages, access grants, the cached tree (nodes + name/text search) and sync runs (owner: catalogue). */
export const catalogue: Migration = {
  name: '20261121100000-catalogue',
  sql: `
CREATE TABLE storages (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL COLLATE NOCASE UNIQUE,
  driver TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  mount_path TEXT NOT NULL DEFAULT '/',
  sync_mode TEXT NOT NULL DEFAULT 'poll',
  sync_interval_s INTEGER NOT NULL DEFAULT 900,
  enabled INTEGER NOT NULL DEFAULT 1,
  read_only INTEGER NOT NULL DEFAULT 0,
  rbac_enabled INTEGER NOT NULL DEFAULT 0,
  replica_target_id INTEGER,
  status TEXT NOT NULL DEFAULT 'unknown',
  status_reason TEXT,
  last_sync_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE storage_grants (
  id INTEGER PRIMARY KEY,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
  group_name TEXT,
  level TEXT NOT NULL CHECK (level IN ('viewer','editor')),
  CHECK ((user_id IS NULL) != (group_name IS NULL))
);
CREATE INDEX storage_grants_storage ON storage_grants(storage_id);
CREATE TABLE nodes (
  id INTEGER PRIMARY KEY,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  dir TEXT NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('dir','file')),
  size INTEGER NOT NULL DEFAULT 0,
  mtime INTEGER NOT NULL DEFAULT 0,
  etag TEXT,
  mime TEXT,
  sort_key TEXT NOT NULL,
  owner_id INTEGER,
  thumb_state TEXT,
  thumb_error TEXT,
  thumb_exp INTEGER,
  thumb_sig TEXT,
  scan_state TEXT,
  app_state TEXT,
  deleted_at TEXT,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX nodes_path ON nodes(storage_id, path);
CREATE INDEX nodes_listing ON nodes(storage_id, dir, type, sort_key);
CREATE INDEX nodes_owner ON nodes(owner_id) WHERE owner_id IS NOT NULL;
CREATE VIRTUAL TABLE search_fts USING fts5(name, body, tokenize = 'trigram');
CREATE TABLE sync_runs (
  id INTEGER PRIMARY KEY,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  kind TEXT NOT NULL DEFAULT 'full',
  status TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  added INTEGER NOT NULL DEFAULT 0,
  updated INTEGER NOT NULL DEFAULT 0,
  removed INTEGER NOT NULL DEFAULT 0,
  errors INTEGER NOT NULL DEFAULT 0,
  seen INTEGER NOT NULL DEFAULT 0,
  guard_tripped INTEGER NOT NULL DEFAULT 0,
  message TEXT
);
CREATE INDEX sync_runs_storage ON sync_runs(storage_id, id);
CREATE TABLE sync_errors (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  code TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX sync_errors_run ON sync_errors(run_id);
`,
};
