import { portable } from './kit';

/**
 * SSH public keys registered per account (owner: auth), for public-key
 * sign-in to the SFTP gateway. A key is stored as its OpenSSH wire blob
 * (base64) with its SHA256 fingerprint, which finds it at sign-in; the same
 * key once per account. Keys go with their person.
 */
export const sshKeys = portable('20261126130100-ssh-keys', ({ schema: s, int, serial }) => [
  s
    .createTable('ssh_keys')
    .addColumn('id', int, serial)
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('algo', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addUniqueConstraint('ssh_keys_user_fingerprint', ['user_id', 'fingerprint']),
]);
