import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Desktop pairing keys become API keys bound to a machine (owner: auth): one
 * list of keys per person (the sessions page shows them together), one
 * revoke. A machine-bound key carries no verbs: it only signs its desktop in
 * (`POST /api/auth/desktop/login`). Its old hash (of machine id and key) is
 * kept, so a desktop paired before keeps working; ids are kept where free.
 * The copy is portable SQL (on a new PostgreSQL database it copies nothing).
 */
export const deviceKeys = portable('20261126120000-device-keys', ({ schema: s }) => [
  `INSERT INTO api_keys (id, user_id, name, secret_hash, verbs, machine_id, created_by, created_at, last_used_at, revoked_at)
  SELECT d.id, d.user_id, d.label, d.key_hash, '[]', d.machine_id, d.user_id, d.created_at, d.last_used_at, d.revoked_at
  FROM device_keys d WHERE NOT EXISTS (SELECT 1 FROM api_keys a WHERE a.id = d.id)`,
  `INSERT INTO api_keys (user_id, name, secret_hash, verbs, machine_id, created_by, created_at, last_used_at, revoked_at)
  SELECT d.user_id, d.label, d.key_hash, '[]', d.machine_id, d.user_id, d.created_at, d.last_used_at, d.revoked_at
  FROM device_keys d WHERE NOT EXISTS (SELECT 1 FROM api_keys a WHERE a.machine_id = d.machine_id AND a.secret_hash = d.key_hash)`,
  s.dropTable('device_keys'),
  s.createIndex('api_keys_machine').on('api_keys').column('machine_id').where(sql.raw<boolean>('machine_id IS NOT NULL')),
]);
