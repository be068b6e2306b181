import type { Migration } from './types';

/**
 * SSH public keys registered per account (owner: auth), for public-key
 * sign-in to the SFTP gateway. A key is stored as its OpenSSH wire blob
 * (base64) with its SHA256 fingerprint, which finds it at sign-in; the same
 * key once per account. Keys go with their person.
 */
export const sshKeys: Migration = {
  name: '20261126130100-ssh-keys',
  sql: `
CREATE TABLE ssh_keys (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  algo TEXT NOT NULL,
  public_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  UNIQUE (user_id, fingerprint)
);`,
};
