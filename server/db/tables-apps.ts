/**
 * Row types of the app plugins' tables (owner: plugins), split from tables.ts
 * by sub-feature; tables.ts re-exports them and lists them in `DB`.
 */
import type { Generated } from 'kysely';
import type { TenantRow } from './tenant-tables';

/** plugins: one installed app: the verified package (manifest, code, packs as JSON) and the admin's choices. */
export interface AppPluginsTable extends TenantRow {
  id: string;
  version: string;
  publisher: string;
  digest: string;
  manifest: string;
  code: string;
  languages: string;
  /** Icon files by package path, base64 (JSON). */
  icons: string;
  enabled: number;
  settings: string;
  /** Hosts of the manifest's `http_hosts` the admin approved (JSON list). */
  approved_hosts: string;
  installed_by: number | null;
  installed_at: string;
  updated_at: string;
}
/** plugins: an app's own key-value storage (host API `kv.*`). */
export interface AppPluginKvTable extends TenantRow {
  plugin: string;
  key: string;
  value: string;
  updated_at: string;
}
/** plugins: a publisher key the admin trusts for app packages. */
export interface AppPublisherKeysTable {
  id: Generated<number>;
  publisher: string;
  public_key_pem: string;
  added_by: number | null;
  added_at: string;
}
/** plugins: the token of a lock an app set through the host API, for its own later writes (host `locks.*`). */
export interface AppPluginLockTokensTable extends TenantRow {
  plugin: string;
  storage_id: number;
  rel: string;
  token: string;
  locked_at: string;
}
/** plugins: an app's last wake-up (`tick`); claimed with a conditional update so one instance runs it. */
export interface AppPluginWakeupsTable extends TenantRow {
  plugin: string;
  last_at: string;
  outcome: string | null;
}
/** plugins: a scheduled item a wake-up answered and that was queued (each key once per due_at). */
export interface AppPluginScheduleRunsTable extends TenantRow {
  plugin: string;
  key: string;
  due_at: string;
  op_id: string | null;
  ran_at: string;
}
/** plugins: the licence token the admin set for an app; `held_status` is the last held status seen (audit once). */
export interface AppPluginLicensesTable extends TenantRow {
  plugin: string;
  token: string;
  held_status: string | null;
  set_by: number | null;
  set_at: string;
}
/** plugins: an app store's Ed25519 key the admin trusts for licences. */
export interface AppStoreKeysTable {
  id: Generated<number>;
  store: string;
  public_key_pem: string;
  added_by: number | null;
  added_at: string;
}
/** plugins: a licence id the admin revoked locally. */
export interface AppLicenseRevocationsTable {
  license_id: string;
  note: string | null;
  added_by: number | null;
  added_at: string;
  /** Null: the admin's own; `store:<connection id>`: read from that store's signed revocation list. */
  source: string | null;
}
/** store: a store connection (docs/app-store.md): URL, the trusted index key, on/off, the last refresh. */
export interface AppStoreConnectionsTable {
  id: Generated<number>;
  url: string;
  public_key_pem: string;
  fingerprint: string;
  name: string | null;
  enabled: number;
  etag: string | null;
  refreshed_at: string | null;
  last_error: string | null;
  added_by: number | null;
  added_at: string;
  /** The store's revocation list (docs/app-store.md, "Licences online"): its ETag, last read, the 30-day warning rung. */
  revocations_etag: string | null;
  revocations_at: string | null;
  revocations_warned_at: string | null;
}

export interface LanguagePacksTable {
  id: string;
  name: string;
  version: string;
  store_id: number | null;
  sha256: string;
  pack: string;
  installed_at: string;
}

export interface AppStoreUpdatesTable {
  app_id: string;
  auto_update: number;
  notified_version: string | null;
  changed_at: string;
}
