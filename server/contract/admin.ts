export type FieldType = 'string' | 'password' | 'int' | 'bool' | 'select' | 'text' | 'date';

export interface DriverField {
  key: string;
  type: FieldType;
  required?: boolean;
  /** The one field the root-path guard checks. */
  root?: boolean;
  /** Encrypted at rest and read back as `***`. */
  secret?: boolean;
  label: string;
  i18n_key: string;
  placeholder?: string;
  aliases?: string[];
  default?: string | number | boolean;
  /** For `select` fields. */
  options?: string[];
  help?: string;
}

export interface DriverCapabilities {
  read: boolean;
  write: boolean;
  presign: boolean;
  multipart: boolean;
  presigned_multipart: boolean;
  move: boolean;
  copy: boolean;
  walk: boolean;
  watch: boolean;
  ranges: boolean;
  etag: boolean;
}

/** `GET /api/admin/storage-drivers` items. */
export interface DriverDescriptor {
  driver: string;
  label: string;
  i18n_key: string;
  capabilities: DriverCapabilities;
  fields: DriverField[];
  /** Largest name in bytes the backend accepts (255 for a local disk). */
  max_name_bytes?: number;
}

export type SyncMode = 'poll' | 'fsnotify' | 'ondemand';

/** A configured backend (a storage, a replication target): its driver and config, secrets masked as `***`. */
export interface ConfiguredBackend {
  id: number;
  uid: string;
  name: string;
  driver: string;
  config: Record<string, unknown>;
  config_summary: string;
}

/** A storage as the admin API shows it (secrets masked as `***`). */
export interface AdminStorage extends ConfiguredBackend {
  mount_path: string;
  sync_mode: SyncMode;
  sync_interval_s: number;
  enabled: boolean;
  read_only: boolean;
  readonly: boolean;
  rbac_enabled: boolean;
  /** Scans read by OCR for search (docs/fulltext.md, "OCR"); off by default. */
  ocr: boolean;
  replica_target_id: number | null;
  status: string;
  status_reason: string | null;
  last_sync: string;
  created_at: string;
  updated_at: string;
  /** Local storages: the volume recorded under the folder (docs/desktop.md, "Removable drives"); null until first probed. */
  volume?: StorageVolume | null;
}

/** The volume a local storage lives on: identity (null when the filesystem has none), mount point, folder below it. */
export interface StorageVolume {
  kind: 'fs-uuid' | 'volume-uuid' | 'volume-serial';
  id: string | null;
  mount: string;
  sub: string;
  source: string;
}

/** The spec's Sync run, plus `seen` and whether the tombstone guard held back the delete pass. */
export interface SyncRun {
  id: number;
  storage_id: number;
  kind: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  started_at: string;
  finished_at: string | null;
  added: number;
  updated: number;
  removed: number;
  errors: number;
  seen: number;
  guard_tripped: boolean;
  message: string | null;
}

/** `GET /api/admin/sync/runs/:id`. */
export type SyncRunDetail = SyncRun & { error_details: Array<{ path: string; code: string; message: string }> };

export interface Grant {
  id: number;
  user_id: number | null;
  group: string | null;
  level: 'viewer' | 'editor';
  /** '' = the whole storage; else a folder (a home folder). The Access dialog edits whole-storage grants only. */
  path: string;
}

/** Where new people's home folders go (`GET|PATCH /api/admin/homes`). */
export interface HomesSetting {
  enabled: boolean;
  storage_id: number | null;
  folder: string;
  effective_storage: { id: number; name: string } | null;
}

/** GET /metrics's setting (`GET|PATCH /api/admin/metrics`); the token itself only from `GET|POST /api/admin/metrics/token`. */
export interface MetricsSettingsView {
  enabled: boolean;
  /** `token`: every scraper shows the bearer token; `lan`: callers on this machine or its LAN need none. */
  access: 'token' | 'lan';
  token_set: boolean;
  path: '/metrics';
}

/** The spec's Audit event. */
export interface AuditEvent {
  id: number;
  ts: string;
  user_id: number | null;
  user_email: string | null;
  action: string;
  resource: string | null;
  ip: string | null;
  ua: string | null;
  meta: Record<string, unknown>;
}

/** The spec's External service. */
export interface ExternalService {
  name: string;
  url: string;
  enabled: boolean;
  healthy: boolean | null;
  last_check: string | null;
  env_managed: boolean;
  /** Write-only: `***` when one is stored, '' when none. */
  jwt_secret: string;
  /** Ours (document server): the base URL it uses to reach this service; '' = the public URL. */
  callback_url: string;
}

/** The OIDC sign-in settings (docs/auth.md, "OIDC sign-in"). */
export interface OidcSettingsFields {
  /** Offered on the sign-in page when also configured (issuer and client id set). */
  enabled: boolean;
  issuer: string;
  client_id: string;
  /** Stored sealed with the install's key (`enc:v1:…`); read back as `***`, or '' when none (a public client). */
  client_secret: string;
  scopes: string;
  email_claim: string;
  /** '' = derive the username from the e-mail. */
  username_claim: string;
  /** '' = groups are not synced. */
  groups_claim: string;
  /** '' = roles are not managed by the provider. */
  admin_group: string;
  /** '' = `<public URL or request origin>/api/auth/oidc/callback` (`effective_redirect_url`). */
  redirect_url: string;
  label: string;
}

/** `GET/PUT /api/admin/auth/oidc`. */
export interface OidcSettingsView extends OidcSettingsFields {
  /** An issuer and a client id are set. */
  configured: boolean;
  /** Configured and enabled: the sign-in page offers the button. */
  active: boolean;
  /** Fields set by SERVICE_OIDC_* (read-only in the console). */
  env_managed: string[];
  /** The callback URL to register at the provider. */
  effective_redirect_url: string;
}

/** `POST /api/admin/auth/oidc/test`: what discovery found. */
export interface OidcTestResult {
  ok: true;
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string | null;
  scopes_supported: string[];
  claims_supported: string[];
}

/** Requests of one class set: LIST (list/walk pages), HEAD (stat), GET (read), PUT (every change; counted, never budgeted). */
export interface RequestCounts {
  list: number;
  head: number;
  get: number;
  put: number;
}

/** GET /api/admin/storages/:id/meter: a metered storage's requests, budget and estimated cost. */
export interface StorageMeter {
  storage_id: number;
  /** UTC date of "today" by the meter's clock. */
  today: string;
  /** Today's LIST+HEAD+GET requests (what the budget counts). */
  used_today: number;
  /** 0 = unlimited. */
  budget_per_day: number;
  exhausted: boolean;
  /** The last 30 UTC days that had requests, newest first. */
  days: Array<{ day: string } & RequestCounts>;
  /** Prices used (US dollars per 1,000 requests) for this storage's driver. */
  prices: RequestCounts;
  /** Mean daily cost over the days of the last 7 with requests, × 30; US dollars. */
  estimated_monthly_cost: number;
}

/**
 * GET /api/admin/status, the sections the admin console's Status tab reads
 * (docs/architecture.md lists every section; the route carries more).
 */
/** One quota of a tenant and what it uses (`limit` null: no limit). */
export interface QuotaLine {
  limit: number | null;
  used: number;
}

/** `GET /api/admin/quotas` (multi-tenant mode): the admin's tenant's quotas and use (docs/tenants.md, "Step 4: quotas"). */
export interface TenantQuotaUsage {
  bytes: QuotaLine;
  files: QuotaLine;
  people: QuotaLine;
  links: QuotaLine;
  /** The tenant's share of the public uplink budget in percent, or null: none. */
  egress_share: number | null;
}

export interface AdminStatus {
  event_loop: { p50_ms: number; p99_ms: number; max_ms: number; window_s: number };
  memory: { rss_mb: number; heap_used_mb: number };
  uptime_s: number;
  egress: {
    budget_bps: number;
    current_bps: number;
    active_streams: number;
    waiting_streams: number;
    bytes_total: number;
    public_requests: number;
    suspended_links: number;
  };
  request_budgets: Array<{ storage_id: number; name: string; used_today: number; budget_per_day: number; exhausted: boolean }>;
  offline_storages: Array<{
    storage_id: number;
    name: string;
    path: string | null;
    reason: string | null;
    volume_state: 'missing' | 'foreign' | null;
    volume_id: string | null;
  }>;
  governor: {
    lanes: number;
    max_lanes: number;
    active: number;
    waiting: number;
    cpu_percent: number;
    window_s: number;
    budget_percent: number;
    over_budget: boolean;
    paused: boolean;
    pause_reasons: Array<'user' | 'sleep'>;
    power: { on_battery: boolean; user_idle: boolean; sleeping: boolean; source: string };
  };
  /** Search inside documents (docs/fulltext.md): off with SERVICE_TEXT_INDEX=false; storages with no document left out. */
  text_index: {
    enabled: boolean;
    storages: Array<{
      storage_id: number;
      name: string;
      done: number;
      pending: number;
      failed: number;
      skipped: number;
      failures: Array<{ path: string; reason: string; at: string }>;
      /**
       * Set while files wait because extraction's share of the storage's daily request budget is spent
       * (docs/fulltext.md, "Request budgets"): the day's LIST+HEAD+GET count, the share it stops at, the
       * budget, and the UTC date extraction goes on (or sooner, when the budget is raised).
       */
      waiting_budget: { used: number; limit: number; budget: number; until: string } | null;
    }>;
  };
  sleep_inhibitor: {
    active: boolean;
    since: string | null;
    reasons: Array<{ kind: string; count: number }>;
    resumable_ops: Array<{
      id: string;
      kind: string;
      status: string;
      progress: number;
      bytes_done: number | null;
      bytes_total: number | null;
      message: string | null;
      attempts: number;
    }>;
  };
}

/** A tenant as the platform operator's routes show it (`/api/platform/tenants`; docs/tenants.md). */
export interface TenantView {
  id: number;
  slug: string;
  name: string;
  hostnames: string[];
  status: 'active' | 'suspended';
  quotas: Partial<Record<'bytes' | 'files' | 'people' | 'links' | 'egress_share', number>>;
  /** Name and colour of its public pages; `logo` is the logo's hash when it has one. */
  branding: { name?: string; colour?: string; logo?: string };
  created_at: string;
  /** What it uses of its quotas, counted when listed (docs/tenants.md, "Step 4: quotas"). */
  usage?: Record<'bytes' | 'files' | 'people' | 'links', number>;
}
