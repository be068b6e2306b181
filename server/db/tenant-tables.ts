/**
 * Multi-tenant mode's tables (docs/tenants.md): the tables holding a tenant's data (`SCOPED`: every one
 * carries `tenant_id`, and every statement over them filters by it, or sets it on insert; children reached
 * through a parent carry it too). The run-time guard (tenant-guard.ts) and the static scan
 * (test/architecture/tenant-scope.test.ts) read the same list; a new tenant-owned table joins it with its
 * repositories taking a `TenantScope`.
 */

/** The tenant a statement is about; every repository method over a scoped table takes one first. */
export interface TenantScope {
  tenant_id: number;
}

/**
 * Tenant 1, `default`: the only tenant of single-tenant mode. Passed where a door does not select a
 * tenant yet (sign-in, a session or key token's first lookup: docs/tenants.md build step 2) and by system
 * work that is tenant 1's; grep for it to find them.
 */
export const DEFAULT_TENANT: TenantScope = Object.freeze({ tenant_id: 1 });

/** Tables scoped so far, cluster by cluster (docs/tenants.md, "Status"). */
export const SCOPED = [
  'users',
  'groups',
  'user_groups',
  'sessions',
  'api_keys',
  'roles',
  'user_permissions',
  'oidc_pending',
  'oidc_links',
  'mfa_totp',
  'mfa_recovery_codes',
  'mfa_passkeys',
  'mfa_challenges',
  'ssh_keys',
  'storages',
  'storage_grants',
  'upload_sessions',
  'upload_parts',
  'trash_items',
  'versions',
  'av_scans',
  'shares',
  'share_tombstones',
  'link_streams',
  'link_visitors',
  'link_strikes',
  'drop_submissions',
  'drop_files',
  'ops',
  'op_journal',
  'notifications',
  'audit',
  'storage_requests',
  'storage_budgets',
  'sync_runs',
  'sync_errors',
  'file_locks',
  'dav_props',
  'outbox',
  'webhook_deliveries',
  'nodes',
  'node_removals',
  'text_extracts',
  'assistant_conversations',
  'assistant_steps',
  'assistant_prefs',
  'vaults',
  'encrypted_folders',
  'encrypted_folder_keys',
  'encrypted_thumbs',
  'app_plugins',
  'app_plugin_kv',
  'app_plugin_lock_tokens',
  'app_plugin_wakeups',
  'app_plugin_schedule_runs',
  'app_plugin_licenses',
  'replica_targets',
  'replica_rules',
  'replica_failures',
  'nfs_exports',
  'docserver_saves',
  'tenant_logos',
] as const;

/** Row type of a scoped table: its tenant is always set (the guard refuses an insert without it). */
export interface TenantRow {
  tenant_id: number;
}
