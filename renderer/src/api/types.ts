import type { FileEntry } from '../../../server/http/contract';
/**
 * Wire shapes of the server API (spec/SPEC.md plus the lead's extension routes).
 * Only the fields the UI reads are typed; the server may send more.
 */
export interface User {
  id: number;
  email: string;
  username: string;
  role: string;
  groups?: string[];
  language?: string;
  disabled?: boolean;
}

export interface ErrorEnvelope {
  error: string;
  message?: string;
  details?: Record<string, unknown>;
  params?: Record<string, unknown>;
}

/** A listing or search row: the server's File entry (search rows add `path`); the UI also builds bare rows (folders it just made). */
export type Entry = Pick<FileEntry, 'id' | 'name' | 'type' | 'size' | 'modified'> & Partial<FileEntry>;

export interface Listing {
  path: string;
  entries: Entry[];
  total: number;
  storage?: { name: string; driver: string; readonly: boolean } | null;
  next_cursor?: string | null;
}

export type SortKey = 'name' | 'size' | 'modified';
export type SortDir = 'asc' | 'desc';

export interface Operation {
  id: string;
  kind: string;
  status: string;
  progress: number;
  started_at?: string;
  eta_seconds?: number | null;
  label?: string;
  message?: string;
  error?: string;
  error_text?: string;
}

export interface Share {
  id: number;
  path: string;
  token: string;
  url: string;
  kind?: string;
  expires_at?: string | null;
  max_downloads?: number | null;
  downloads?: number;
  created_at?: string;
  comment?: string | null;
  revoked_at?: string | null;
  requires_pin?: boolean;
}

export interface ShareCreated {
  id: number;
  url: string;
  token: string;
  expires_at?: string | null;
  max_downloads?: number | null;
  expiry_clamped?: boolean;
  pin?: string;
}

export interface DropSettings {
  max_files: number;
  max_file_size_mb: number;
  allowed_ext: string[];
  ask_name: boolean;
}

export interface Capabilities {
  version: string;
  limits?: { max_upload_bytes: number; max_archive_bytes: number };
  share_max_ttl_days?: number;
  newdoc_types?: { ext: string; group: string; mime: string; requires: string }[];
  antivirus?: boolean;
}

export interface StorageQuota {
  name: string;
  used_bytes: number;
  file_count: number;
}

export interface UploadSession {
  upload_id: string;
  presigned_urls: { part: number; url: string; expires_at: string }[] | null;
  expires_at: string;
  chunk_size: number;
}

export interface UploadStatus {
  upload_id: string;
  path: string;
  size: number;
  chunk_size: number;
  parts: { part: number; size: number; etag: string }[];
  expires_at: string;
}

export interface DriverField {
  key: string;
  type: 'string' | 'password' | 'int' | 'bool' | 'select' | 'text' | 'date';
  required?: boolean;
  root?: boolean;
  secret?: boolean;
  label: string;
  i18n_key?: string;
  placeholder?: string;
  help?: string;
  aliases?: string[];
  default?: unknown;
  options?: (string | { value: string; label?: string })[];
}

export interface DriverDescriptor {
  driver: string;
  label: string;
  i18n_key?: string;
  capabilities: Record<string, boolean>;
  fields: DriverField[];
}

export interface AdminStorage {
  id: number;
  name: string;
  uid: string;
  driver: string;
  readonly?: boolean;
  read_only?: boolean;
  enabled?: boolean;
  config?: Record<string, unknown>;
  config_summary?: string;
  last_sync?: string | null;
  sync_interval_s?: number;
  sync_mode?: string;
  rbac_enabled?: boolean;
}

export interface SyncRun {
  id: number;
  storage_id: number;
  status: string;
  started_at: string;
  finished_at?: string | null;
  added: number;
  updated: number;
  removed: number;
  errors: number;
  error_list?: { path?: string; error?: string; message?: string }[];
}

export interface Grant {
  id?: number;
  user_id?: number;
  group?: string;
  level: 'viewer' | 'editor';
}

export interface AuditEvent {
  id: number;
  ts: string;
  user_id: number | null;
  user_email: string | null;
  action: string;
  resource: string;
  ip: string;
  ua: string;
  meta: Record<string, unknown>;
}

export interface ExternalService {
  name: string;
  url: string;
  enabled: boolean;
  healthy: boolean | null;
  last_check?: string | null;
  env_managed: boolean;
}

/** `GET /api/admin/update`: the cached status (the server never fetches for it). */
export interface UpdateStatus {
  current_version: string;
  channel: string;
  policy: string;
  checked_at: string | null;
  last_error: { code?: string; message?: string } | null;
  latest: { version: string; date: string; severity: string; notes: string; notes_url: string } | null;
  update_available: boolean;
  candidate: string | null;
  apply_refusal: string | null;
  instructions: string | null;
  in_progress: string | null;
  last_applied: { from: string; to: string; at: string; restart_required: boolean } | null;
}
