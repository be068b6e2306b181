import type { Migration } from './types';

/**
 * Accounts and access (owner: auth). `api_keys`: keys a person (or an admin
 * for them) made, with verbs and an optional folder root, kept hashed; a
 * device pairing key is bound to its machine. `roles`: custom roles, a set of
 * permission settings over a person's built-in role; `user_permissions`: a
 * person's own exceptions. Both feed the decision order of auth/permissions.
 */
export const keysRoles: Migration = {
  name: '20261125110000-keys-roles',
  sql: `
CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  verbs TEXT NOT NULL,
  root_storage_id INTEGER REFERENCES storages(id) ON DELETE CASCADE,
  root_rel TEXT,
  machine_id TEXT,
  created_by INTEGER,
  created_at TEXT NOT NULL,
  expires_at TEXT,
  last_used_at TEXT,
  last_used_ip TEXT,
  revoked_at TEXT
);
CREATE INDEX api_keys_user ON api_keys(user_id);
CREATE TABLE roles (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL COLLATE NOCASE UNIQUE,
  permissions TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
ALTER TABLE users ADD COLUMN custom_role_id INTEGER REFERENCES roles(id) ON DELETE SET NULL;
CREATE TABLE user_permissions (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  permission TEXT NOT NULL,
  allowed INTEGER NOT NULL,
  PRIMARY KEY (user_id, permission)
) WITHOUT ROWID;`,
};
