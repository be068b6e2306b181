import type { Migration } from './types';

export const foundation: Migration = {
  name: '20261121093000-foundation',
  sql: `
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL COLLATE NOCASE UNIQUE,
  username TEXT NOT NULL COLLATE NOCASE UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('admin','user','viewer')),
  disabled INTEGER NOT NULL DEFAULT 0,
  language TEXT,
  password_hash TEXT,
  auth_driver TEXT NOT NULL DEFAULT 'local',
  quota_bytes INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE groups (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE user_groups (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  group_id INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, group_id)
);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind TEXT NOT NULL DEFAULT 'login',
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  ip TEXT,
  ua TEXT
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE TABLE device_keys (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  machine_id TEXT NOT NULL,
  label TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE TABLE audit (
  id INTEGER PRIMARY KEY,
  ts TEXT NOT NULL,
  user_id INTEGER,
  user_email TEXT,
  action TEXT NOT NULL,
  resource TEXT,
  ip TEXT,
  ua TEXT,
  meta TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_ts ON audit(ts);
CREATE INDEX audit_action ON audit(action, ts);
CREATE INDEX audit_user ON audit(user_id, ts);
CREATE TABLE ops (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  payload TEXT NOT NULL DEFAULT '{}',
  owner_id INTEGER,
  visible INTEGER NOT NULL DEFAULT 0,
  dedup_key TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 1,
  run_at TEXT NOT NULL,
  progress REAL NOT NULL DEFAULT 0,
  bytes_done INTEGER NOT NULL DEFAULT 0,
  bytes_total INTEGER NOT NULL DEFAULT 0,
  message TEXT,
  result TEXT,
  error_code TEXT,
  error_params TEXT,
  error_text TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  lease_until TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  updated_at TEXT NOT NULL
);
CREATE INDEX ops_ready ON ops(status, priority DESC, run_at);
CREATE UNIQUE INDEX ops_dedup ON ops(dedup_key) WHERE dedup_key IS NOT NULL AND status IN ('queued','running');
CREATE INDEX ops_owner ON ops(owner_id, created_at);
CREATE TABLE cron_state (name TEXT PRIMARY KEY, last_run_at TEXT NOT NULL);
CREATE TABLE outbox (
  id INTEGER PRIMARY KEY,
  event TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL,
  published_at TEXT
);
CREATE INDEX outbox_pending ON outbox(id) WHERE published_at IS NULL;
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`,
};
