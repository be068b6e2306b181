import { portable } from './kit';

/**
 * OIDC sign-in (owner: auth).
 * - `oidc_pending`: one row per sign-in started at the identity provider, keyed
 *   by the SHA-256 of its `state` (the state itself only lives in the browser's
 *   cookie and the provider's redirect); consumed at the callback, refused after
 *   10 minutes, swept hourly.
 * - `oidc_links`: which account an issuer's `sub` signs in as. The subject is
 *   the stable identity; an e-mail can change at the provider.
 */
export const oidc = portable('20261126100000-oidc', ({ schema: s, int, withoutRowid }) => [
  withoutRowid(
    s
      .createTable('oidc_pending')
      .addColumn('state_hash', 'text', (c) => c.primaryKey())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('code_verifier', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('next', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull()),
  ),
  s.createIndex('oidc_pending_created').on('oidc_pending').column('created_at'),
  withoutRowid(
    s
      .createTable('oidc_links')
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('sub', 'text', (c) => c.notNull())
      .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_login_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('oidc_links_pk', ['issuer', 'sub']),
  ),
  s.createIndex('oidc_links_user').on('oidc_links').column('user_id'),
]);
