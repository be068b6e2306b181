import type { Migration } from './types';

/**
 * The document server integration (owner: docserver). `external_services`:
 * one row per named external service (`docserver`, `diagram`), the shared JWT
 * secret sealed with the install's key, `env_managed` when the environment
 * re-applies it at every start. `docserver_saves`: the newest document-editor
 * save written back per node (which editing session, its `lastsave`, and the
 * etag the write produced), so a replayed older callback cannot overwrite it.
 */
export const docserver: Migration = {
  name: '20261127000500-docserver',
  sql: `
CREATE TABLE external_services (
  name TEXT PRIMARY KEY,
  url TEXT NOT NULL DEFAULT '',
  jwt_secret TEXT NOT NULL DEFAULT '',
  callback_url TEXT NOT NULL DEFAULT '',
  healthy INTEGER,
  last_check TEXT,
  env_managed INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL
);
CREATE TABLE docserver_saves (
  node_id INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  doc_key TEXT NOT NULL,
  lastsave INTEGER NOT NULL,
  etag TEXT NOT NULL,
  saved_at TEXT NOT NULL
);`,
};
