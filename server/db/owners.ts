/**
 * Which module writes each table. Only the owner inserts, updates or deletes
 * rows (others read, or ask the owner); `test/architecture/ownership.test.ts`
 * checks every write statement in server/ against this table, and
 * docs/architecture.md shows it.
 */
export const TABLE_OWNERS = {
  _migrations: 'db',
  meta: 'db',
  users: 'auth',
  groups: 'auth',
  user_groups: 'auth',
  sessions: 'auth',
  api_keys: 'auth',
  roles: 'auth',
  user_permissions: 'auth',
  oidc_pending: 'auth',
  oidc_links: 'auth',
  mfa_totp: 'auth',
  mfa_recovery_codes: 'auth',
  mfa_passkeys: 'auth',
  mfa_challenges: 'auth',
  ssh_keys: 'auth',
  audit: 'audit',
  ops: 'jobs',
  op_journal: 'jobs',
  cron_state: 'jobs',
  outbox: 'events',
  notifications: 'events',
  webhook_deliveries: 'events',
  settings: 'settings',
  storages: 'catalogue',
  storage_grants: 'catalogue',
  nodes: 'catalogue',
  search_fts: 'catalogue',
  sync_runs: 'catalogue',
  sync_errors: 'catalogue',
  upload_sessions: 'uploads',
  upload_parts: 'uploads',
  shares: 'shares',
  share_tombstones: 'shares',
  drop_submissions: 'shares',
  drop_files: 'shares',
  trash_items: 'protection',
  versions: 'protection',
  av_scans: 'protection',
  dav_props: 'gateways',
  external_services: 'docserver',
  docserver_saves: 'docserver',
} as const;

export type TableName = keyof typeof TABLE_OWNERS;
