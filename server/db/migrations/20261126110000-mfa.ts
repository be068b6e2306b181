import type { Migration } from './types';

/**
 * Two-factor sign-in (owner: auth). One TOTP row per person (the sealed
 * secret once confirmed, a sealed pending secret while enrolling, and the
 * last accepted time step: a code of that step or an earlier one is a
 * replay); recovery codes as keyed hashes, single use; WebAuthn credentials;
 * short-lived challenges (login second step, passkey registration), stored by
 * the hash of their token. Everything goes with its person.
 */
export const mfa: Migration = {
  name: '20261126110000-mfa',
  sql: `
CREATE TABLE mfa_totp (
  user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  secret TEXT,
  pending_secret TEXT,
  pending_at TEXT,
  last_step INTEGER NOT NULL DEFAULT 0,
  confirmed_at TEXT
);
CREATE TABLE mfa_recovery_codes (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  used_at TEXT
);
CREATE INDEX mfa_recovery_codes_user ON mfa_recovery_codes(user_id);
CREATE TABLE mfa_passkeys (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  credential_id TEXT NOT NULL UNIQUE,
  public_key TEXT NOT NULL,
  counter INTEGER NOT NULL DEFAULT 0,
  transports TEXT NOT NULL DEFAULT '[]',
  rp_id TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);
CREATE INDEX mfa_passkeys_user ON mfa_passkeys(user_id);
CREATE TABLE mfa_challenges (
  id TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  purpose TEXT NOT NULL,
  login TEXT NOT NULL DEFAULT '',
  webauthn_challenge TEXT,
  rp_id TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX mfa_challenges_user ON mfa_challenges(user_id);
CREATE INDEX mfa_challenges_expires ON mfa_challenges(expires_at);`,
};
