import { portable } from './kit';

/**
 * Encrypted folders and the personal vault (owner: vault; docs/vault.md, issue 31). The server stores, never
 * decrypts: `vaults` one row per person (the KDF parameters, the public key, the private key wrapped under
 * the passphrase and under the recovery key, and SHA-256 of each `auth` proof); `encrypted_folders` the root
 * of each encrypted subtree (storage and relative path) with its owner and current key version;
 * `encrypted_folder_keys` every version's folder key wrapped for each member (a member is whoever holds the
 * current version); `encrypted_thumbs` the browser-made encrypted thumbnails, going with their node.
 */
export const vault = portable('20261206190000-vault', ({ schema: s, int, serial }) => [
  s
    .createTable('vaults')
    .addColumn('user_id', int, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('kdf', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('wrapped_private_key', 'text', (c) => c.notNull())
    .addColumn('recovery_wrapped_private_key', 'text', (c) => c.notNull())
    .addColumn('auth_hash', 'text', (c) => c.notNull())
    .addColumn('recovery_auth_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  s
    .createTable('encrypted_folders')
    .addColumn('id', int, serial)
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('rel', 'text', (c) => c.notNull())
    .addColumn('owner_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key_version', int, (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('encrypted_folders_place', ['storage_id', 'rel']),
  s
    .createTable('encrypted_folder_keys')
    .addColumn('folder_id', int, (c) => c.notNull().references('encrypted_folders.id').onDelete('cascade'))
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('version', int, (c) => c.notNull())
    .addColumn('wrapped_key', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('encrypted_folder_keys_pk', ['folder_id', 'user_id', 'version']),
  s.createIndex('encrypted_folder_keys_user').on('encrypted_folder_keys').columns(['user_id', 'folder_id']),
  s
    .createTable('encrypted_thumbs')
    .addColumn('node_id', int, (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
]);
