import { portable } from './kit';

/**
 * Two-factor sign-in (owner: auth). One TOTP row per person (the sealed
 * secret once confirmed, a sealed pending secret while enrolling, and the
 * last accepted time step: a code of that step or an earlier one is a
 * replay); recovery codes as keyed hashes, single use; WebAuthn credentials;
 * short-lived challenges (login second step, passkey registration), stored by
 * the hash of their token. Everything goes with its person.
 */
export const mfa = portable('20261126110000-mfa', ({ schema: s, int, serial }) => [
  s
    .createTable('mfa_totp')
    .addColumn('user_id', int, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret', 'text')
    .addColumn('pending_secret', 'text')
    .addColumn('pending_at', 'text')
    .addColumn('last_step', int, (c) => c.notNull().defaultTo(0))
    .addColumn('confirmed_at', 'text'),
  s
    .createTable('mfa_recovery_codes')
    .addColumn('id', int, serial)
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text'),
  s.createIndex('mfa_recovery_codes_user').on('mfa_recovery_codes').column('user_id'),
  s
    .createTable('mfa_passkeys')
    .addColumn('id', int, serial)
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', int, (c) => c.notNull().defaultTo(0))
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('rp_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text'),
  s.createIndex('mfa_passkeys_user').on('mfa_passkeys').column('user_id'),
  s
    .createTable('mfa_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('login', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('webauthn_challenge', 'text')
    .addColumn('rp_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull()),
  s.createIndex('mfa_challenges_user').on('mfa_challenges').column('user_id'),
  s.createIndex('mfa_challenges_expires').on('mfa_challenges').column('expires_at'),
]);
