import type { Migration } from './types';

/**
 * Replication (owner: replication): backup targets, path rules, the failure
 * log keyed by (storage, path, op), the single report row, the last audit and the last restore drill. A storage links
 * to a target through its existing `replica_target_id` column; deleting a
 * target unlinks through the catalogue, which owns `storages`.
 */
export const replication: Migration = {
  name: '20261127100000-replication',
  sql: `
CREATE TABLE replica_targets (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL UNIQUE,
  driver TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  mode TEXT NOT NULL DEFAULT 'async' CHECK (mode IN ('async', 'sync')),
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE replica_rules (
  id INTEGER PRIMARY KEY,
  path_pattern TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('mirror', 'append_only', 'skip')),
  priority INTEGER NOT NULL DEFAULT 100,
  enabled INTEGER NOT NULL DEFAULT 1,
  description TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE replica_failures (
  id INTEGER PRIMARY KEY,
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  rel TEXT NOT NULL,
  op TEXT NOT NULL CHECK (op IN ('write', 'delete', 'move', 'copy')),
  to_rel TEXT,
  code TEXT NOT NULL,
  message TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  resolved_at TEXT,
  UNIQUE (storage_id, rel, op)
);
CREATE INDEX replica_failures_open ON replica_failures(resolved_at, id);
CREATE TABLE replica_report (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  ran_at TEXT NOT NULL,
  unresolved INTEGER NOT NULL,
  repaired_24h INTEGER NOT NULL,
  actionable INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE TABLE replica_audit (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  ran_at TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE TABLE replica_drill (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  ran_at TEXT NOT NULL,
  body TEXT NOT NULL
);`,
};
