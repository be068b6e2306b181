import type { Migration } from './types';

/**
 * OIDC sign-in (owner: auth).
 * - `oidc_pending`: one row per sign-in started at the identity provider, keyed
 *   by the SHA-256 of its `state` (the state itself only lives in the browser's
 *   cookie and the provider's redirect); consumed at the callback, refused after
 *   10 minutes, swept hourly.
 * - `oidc_links`: which account an issuer's `sub` signs in as. The subject is
 *   the stable identity; an e-mail can change at the provider.
 */
export const oidc: Migration = {
  name: '20261126100000-oidc',
  sql: `
CREATE TABLE oidc_pending (
  state_hash TEXT PRIMARY KEY,
  issuer TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  nonce TEXT NOT NULL,
  next TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX oidc_pending_created ON oidc_pending(created_at);
CREATE TABLE oidc_links (
  issuer TEXT NOT NULL,
  sub TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  last_login_at TEXT NOT NULL,
  PRIMARY KEY (issuer, sub)
) WITHOUT ROWID;
CREATE INDEX oidc_links_user ON oidc_links(user_id);
`,
};
