/**
 * Row types of every table, for Kysely. Each table has one owning module
 * (named in the comment); only that module writes to it.
 */
import type { Generated } from 'kysely';
import type { TenantRow } from './tenant-tables';
import type {
  AppLicenseRevocationsTable,
  AppPluginKvTable,
  AppPluginLicensesTable,
  AppPluginLockTokensTable,
  AppPluginScheduleRunsTable,
  AppPluginsTable,
  AppPluginWakeupsTable,
  AppPublisherKeysTable,
  AppStoreConnectionsTable,
  AppStoreKeysTable,
  LanguagePacksTable,
  AppStoreUpdatesTable,
} from './tables-apps';
import type { AssistantConversationsTable, AssistantPrefsTable, AssistantStepsTable } from './tables-assistant';
import type { LinkStreamsTable, LinkStrikesTable, LinkVisitorsTable } from './tables-link-guard';
import type { DavPropsTable, NfsExportsTable } from './tables-gateways';
import type { SearchFtsTable, StorageBudgetsTable, StorageRequestsTable, TextExtractsTable } from './tables-catalogue';
import type { EncryptedFolderKeysTable, EncryptedFoldersTable, EncryptedThumbsTable, VaultsTable } from './tables-vault';
import type { DropFilesTable, DropSubmissionsTable, SharesTable, ShareTombstonesTable } from './tables-shares';

export type * from './tables-apps';
export type * from './tables-assistant';
export type * from './tables-link-guard';
export type * from './tables-gateways';
export type * from './tables-catalogue';
export type * from './tables-vault';
export type * from './tables-shares';

/** db (platform): a tenant (docs/tenants.md); JSON lists and objects as text. Tenant 1 is `default`. */
export interface TenantsTable {
  id: Generated<number>;
  slug: string;
  name: string;
  hostnames: Generated<string>;
  status: Generated<'active' | 'suspended'>;
  /** Set: a tombstone keeping its id from being reused (auth's TenantRecordsRepo.remove). */
  deleted_at: string | null;
  /** Set on a tombstone once every module's rows of the tenant are gone (db's TenantPurgeRepo). */
  purged_at: Generated<string | null>;
  quotas: Generated<string>;
  branding: Generated<string>;
  created_at: string;
}
/** auth: a tenant's logo for its public pages (base64; docs/tenants.md, "Step 4"). */
export interface TenantLogosTable extends TenantRow {
  mime: string;
  etag: string;
  data: string;
  updated_at: string;
}
/** auth */
export interface UsersTable extends TenantRow {
  id: Generated<number>;
  email: string;
  username: string;
  role: 'admin' | 'user' | 'viewer';
  disabled: number;
  language: string | null;
  password_hash: string | null;
  auth_driver: string;
  custom_role_id: number | null;
  quota_bytes: number | null;
  created_at: string;
  updated_at: string;
  /** 1 for a platform operator (docs/tenants.md, "Who is who"): tenant 1's first admin and whom they make one. */
  platform_operator: Generated<number>;
}
/** auth */
export interface GroupsTable extends TenantRow {
  id: Generated<number>;
  name: string;
}
/** auth */
export interface UserGroupsTable extends TenantRow {
  user_id: number;
  group_id: number;
}
/** auth: server-side sessions; cookie and bearer JWT both name a row here. */
export interface SessionsTable extends TenantRow {
  id: string;
  user_id: number;
  kind: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
  ip: string | null;
  ua: string | null;
}
/** auth: API keys (hash only); `verbs` is a JSON array, the root a storage id and a relative path. */
export interface ApiKeysTable extends TenantRow {
  id: Generated<number>;
  user_id: number;
  name: string;
  secret_hash: string;
  verbs: string;
  root_storage_id: number | null;
  root_rel: string | null;
  machine_id: string | null;
  created_by: number | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  revoked_at: string | null;
}

/** auth: custom roles; `permissions` is a JSON object of permission id → allowed. */
export interface RolesTable extends TenantRow {
  id: Generated<number>;
  name: string;
  permissions: string;
  created_at: string;
  updated_at: string;
}

/** auth: a person's own permission exceptions. */
export interface UserPermissionsTable extends TenantRow {
  user_id: number;
  permission: string;
  allowed: number;
}

/** auth: OIDC sign-ins started at the provider, by the SHA-256 of their state (one-time, 10 minutes). */
export interface OidcPendingTable extends TenantRow {
  state_hash: string;
  issuer: string;
  code_verifier: string;
  nonce: string;
  next: string;
  redirect_uri: string;
  created_at: string;
}
/** auth: the account an issuer's subject signs in as. */
export interface OidcLinksTable extends TenantRow {
  issuer: string;
  sub: string;
  user_id: number;
  created_at: string;
  last_login_at: string;
}
/** auth: a person's authenticator-app secret (sealed), pending while enrolling; `last_step` refuses replays. */
export interface MfaTotpTable extends TenantRow {
  user_id: number;
  secret: string | null;
  pending_secret: string | null;
  pending_at: string | null;
  last_step: Generated<number>;
  confirmed_at: string | null;
}
/** auth: single-use recovery codes, stored as keyed hashes. */
export interface MfaRecoveryCodesTable extends TenantRow {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  created_at: string;
  used_at: string | null;
}
/** auth: WebAuthn credentials (passkeys); public key and id in base64url. */
export interface MfaPasskeysTable extends TenantRow {
  id: Generated<number>;
  user_id: number;
  credential_id: string;
  public_key: string;
  counter: Generated<number>;
  transports: Generated<string>;
  rp_id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}
/** auth: SSH public keys for SFTP sign-in (OpenSSH wire blob in base64, `SHA256:` fingerprint). */
export interface SshKeysTable extends TenantRow {
  id: Generated<number>;
  user_id: number;
  name: string;
  algo: string;
  public_key: string;
  fingerprint: string;
  created_at: string;
  last_used_at: string | null;
}
/** auth: short-lived challenges (login second step, passkey registration), keyed by the hash of their token. */
export interface MfaChallengesTable extends TenantRow {
  id: string;
  user_id: number;
  purpose: 'login' | 'register';
  login: Generated<string>;
  webauthn_challenge: string | null;
  rp_id: string | null;
  created_at: string;
  expires_at: string;
}
/** audit */
export interface AuditTable extends TenantRow {
  id: Generated<number>;
  ts: string;
  user_id: number | null;
  user_email: string | null;
  action: string;
  resource: string | null;
  ip: string | null;
  ua: string | null;
  meta: string;
}
/** jobs */
export interface OpsTable extends TenantRow {
  id: string;
  kind: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  priority: number;
  payload: string;
  owner_id: number | null;
  visible: number;
  dedup_key: string | null;
  attempts: number;
  max_attempts: number;
  run_at: string;
  progress: number;
  bytes_done: number;
  bytes_total: number;
  message: string | null;
  result: string | null;
  error_code: string | null;
  error_params: string | null;
  error_text: string | null;
  cancel_requested: number;
  lease_until: string | null;
  /** The instance that claimed the running op (several instances: docs/operations.md). */
  lease_owner: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}
/** jobs: what a long op has committed, so a resumed attempt skips it. */
export interface OpJournalTable extends TenantRow {
  op_id: string;
  key: string;
  value: string;
}

/** jobs: last run of each cron schedule. */
export interface CronStateTable {
  name: string;
  last_run_at: string;
}
/** events: written in the same transaction as the change, published after commit. */
export interface OutboxTable extends TenantRow {
  id: Generated<number>;
  event: string;
  payload: string;
  created_at: string;
  published_at: string | null;
}
/** settings: admin-editable settings as JSON values. */
export interface SettingsTable {
  key: string;
  value: string;
  updated_at: string;
}
/** db (MetaStore): one-time instance facts (first-boot seeding done, desktop bootstrap consumed, ...). */
export interface MetaTable {
  key: string;
  value: string;
}

/** auth: login throttle counters shared by several instances (auth/throttle.ts). */
export interface LoginFailuresTable {
  key: string;
  failures: number;
  first_at: number;
  locked_until: number;
}
export interface DB {
  tenants: TenantsTable;
  tenant_logos: TenantLogosTable;
  login_failures: LoginFailuresTable;
  users: UsersTable;
  groups: GroupsTable;
  user_groups: UserGroupsTable;
  sessions: SessionsTable;
  oidc_pending: OidcPendingTable;
  oidc_links: OidcLinksTable;
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_passkeys: MfaPasskeysTable;
  mfa_challenges: MfaChallengesTable;
  ssh_keys: SshKeysTable;
  audit: AuditTable;
  ops: OpsTable;
  cron_state: CronStateTable;
  outbox: OutboxTable;
  settings: SettingsTable;
  meta: MetaTable;
  storages: StoragesTable;
  storage_grants: StorageGrantsTable;
  nodes: NodesTable;
  node_removals: NodeRemovalsTable;
  file_locks: FileLocksTable;
  search_fts: SearchFtsTable;
  text_extracts: TextExtractsTable;
  storage_requests: StorageRequestsTable;
  storage_budgets: StorageBudgetsTable;
  sync_runs: SyncRunsTable;
  sync_errors: SyncErrorsTable;
  upload_sessions: UploadSessionsTable;
  upload_parts: UploadPartsTable;
  shares: SharesTable;
  share_tombstones: ShareTombstonesTable;
  link_streams: LinkStreamsTable;
  link_visitors: LinkVisitorsTable;
  link_strikes: LinkStrikesTable;
  drop_submissions: DropSubmissionsTable;
  drop_files: DropFilesTable;
  trash_items: TrashItemsTable;
  versions: VersionsTable;
  av_scans: AvScansTable;
  notifications: NotificationsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  op_journal: OpJournalTable;
  api_keys: ApiKeysTable;
  roles: RolesTable;
  user_permissions: UserPermissionsTable;
  dav_props: DavPropsTable;
  nfs_exports: NfsExportsTable;
  external_services: ExternalServicesTable;
  docserver_saves: DocserverSavesTable;
  assistant_conversations: AssistantConversationsTable;
  assistant_steps: AssistantStepsTable;
  assistant_prefs: AssistantPrefsTable;
  app_plugins: AppPluginsTable;
  app_plugin_kv: AppPluginKvTable;
  app_publisher_keys: AppPublisherKeysTable;
  app_plugin_lock_tokens: AppPluginLockTokensTable;
  app_plugin_wakeups: AppPluginWakeupsTable;
  app_plugin_schedule_runs: AppPluginScheduleRunsTable;
  app_plugin_licenses: AppPluginLicensesTable;
  app_store_keys: AppStoreKeysTable;
  app_store_connections: AppStoreConnectionsTable;
  language_packs: LanguagePacksTable;
  app_store_updates: AppStoreUpdatesTable;
  app_license_revocations: AppLicenseRevocationsTable;
  vaults: VaultsTable;
  encrypted_folders: EncryptedFoldersTable;
  encrypted_folder_keys: EncryptedFolderKeysTable;
  encrypted_thumbs: EncryptedThumbsTable;
}

/** catalogue */
export interface StoragesTable extends TenantRow {
  id: Generated<number>;
  uid: string;
  name: string;
  driver: string;
  config: string;
  mount_path: string;
  sync_mode: 'poll' | 'fsnotify' | 'ondemand';
  sync_interval_s: number;
  enabled: number;
  read_only: number;
  rbac_enabled: number;
  /** Scans (images, PDFs without a text layer) read by OCR for search. */
  ocr: number;
  replica_target_id: number | null;
  status: string;
  status_reason: string | null;
  last_sync_at: string | null;
  created_at: string;
  updated_at: string;
  /** Local storages: the volume under the path as JSON (catalogue/volumes.ts), null until first probed. */
  volume: string | null;
}
/** catalogue */
export interface StorageGrantsTable extends TenantRow {
  id: Generated<number>;
  storage_id: number;
  user_id: number | null;
  group_name: string | null;
  level: 'viewer' | 'editor';
  /** '' = the whole storage; else a folder and what is inside it (a home folder). */
  path: Generated<string>;
}
/** catalogue: the cached tree. Paths are relative to the storage root; `dir` is the parent path. */
export interface NodesTable extends TenantRow {
  id: Generated<number>;
  storage_id: number;
  dir: string;
  name: string;
  path: string;
  type: 'dir' | 'file';
  size: number;
  mtime: number;
  etag: string | null;
  mime: string | null;
  sort_key: string;
  owner_id: number | null;
  thumb_state: string | null;
  thumb_error: string | null;
  thumb_exp: number | null;
  thumb_sig: string | null;
  scan_state: string | null;
  app_state: string | null;
  deleted_at: string | null;
  updated_at: string;
}
/** catalogue: what the write gate removed or moved away lately (catalogue/nodes.repo.ts `removalsSince`). */
export interface NodeRemovalsTable extends TenantRow {
  storage_id: number;
  path: string;
  removed_at: string;
}
/** catalogue: an app's lock on a file (node), see catalogue/file-locks.ts. */
export interface FileLocksTable extends TenantRow {
  node_id: number;
  plugin: string;
  plugin_label: string;
  reason: string | null;
  reason_text: string | null;
  /** ISO 8601; null: until cleared. */
  until: string | null;
  /** sha256 (hex) of the holder's token. */
  token_hash: string;
  locked_by: number | null;
  locked_at: string;
}
/** catalogue */
export interface SyncRunsTable extends TenantRow {
  id: Generated<number>;
  storage_id: number;
  kind: Generated<string>;
  status: 'queued' | 'running' | 'completed' | 'failed';
  started_at: string;
  finished_at: string | null;
  added: Generated<number>;
  updated: Generated<number>;
  removed: Generated<number>;
  errors: Generated<number>;
  seen: Generated<number>;
  guard_tripped: Generated<number>;
  message: string | null;
}
/** catalogue */
export interface SyncErrorsTable extends TenantRow {
  id: Generated<number>;
  run_id: number;
  path: string;
  code: string;
  message: string;
}
/** uploads: a chunked upload in flight. `handle` is the driver's multipart handle (mode `driver`). */
export interface UploadSessionsTable extends TenantRow {
  id: string;
  owner_id: number;
  storage_id: number;
  path: string;
  size: number;
  chunk_size: number;
  mime: string | null;
  mode: 'driver' | 'staged';
  handle: string | null;
  state: 'open' | 'finalizing';
  created_at: string;
  expires_at: string;
  /** Set when finalize published the bytes; cleared with the row once announced. */
  published_at?: string | null;
  /** The instance running the finalize, and until when (ms) its lease holds. */
  finalizing_by?: string | null;
  finalize_until?: number | null;
}
/** uploads: the parts a session holds. */
export interface UploadPartsTable extends TenantRow {
  upload_id: string;
  part: number;
  size: number;
  etag: string;
  sha256: string | null;
}
/** protection: an item in a storage's `.service-trash/`. */
export interface TrashItemsTable extends TenantRow {
  id: Generated<number>;
  storage_id: number;
  orig_path: string;
  trash_rel: string;
  type: 'file' | 'dir';
  size: number;
  reason: 'delete' | 'infected';
  deleted_by: number | null;
  deleted_by_email: string | null;
  sha256: string | null;
  deleted_at: string;
}
/** protection: a snapshot in `.versions/` taken before an overwrite. */
export interface VersionsTable extends TenantRow {
  id: Generated<number>;
  storage_id: number;
  path: string;
  version_rel: string;
  size: number;
  mtime: number;
  created_by: number | null;
  created_at: string;
}
/** protection: the last antivirus outcome of a path. */
export interface AvScansTable extends TenantRow {
  storage_id: number;
  path: string;
  state: 'clean' | 'infected' | 'error' | 'skipped';
  signature: string | null;
  detail: string | null;
  written_at: string | null;
  scanned_at: string;
}
/** events: the in-app bell. */
export interface NotificationsTable extends TenantRow {
  id: Generated<number>;
  user_id: number;
  event: string;
  severity: 'info' | 'warning' | 'error';
  title: string;
  body: string;
  data: string;
  read_at: string | null;
  created_at: string;
}
/** events: the webhook delivery log. */
export interface WebhookDeliveriesTable extends TenantRow {
  id: string;
  target_id: string;
  url: string;
  event: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  response_code: number | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

/** docserver: the external services (document server, diagram editor). */
export interface ExternalServicesTable {
  name: string;
  url: string;
  /** Sealed with the install's key (`enc:v1:...`), '' when unset. */
  jwt_secret: string;
  callback_url: string;
  healthy: number | null;
  last_check: string | null;
  env_managed: number;
  updated_at: string;
}

/** docserver: the newest document-editor save written back, per node. */
export interface DocserverSavesTable extends TenantRow {
  node_id: number;
  doc_key: string;
  /** The callback's `lastsave` in epoch ms. */
  lastsave: number;
  /** The file's etag right after the write. */
  etag: string;
  saved_at: string;
}
