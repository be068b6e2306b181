/** Row types of the shares module's tables (public links, their tombstones, file requests); re-exported by tables.ts. */
import type { Generated } from 'kysely';
import type { TenantRow } from './tenant-tables';

/** shares: a public link (`kind` link) or a file request (`kind` drop). */
export interface SharesTable extends TenantRow {
  id: number;
  token: string;
  kind: 'link' | 'drop';
  owner_id: number;
  storage_id: number;
  rel: string;
  is_dir: number;
  ttl: string | null;
  expires_at: string | null;
  expiry_clamped: number;
  max_downloads: number | null;
  downloads: number;
  max_uploads: number | null;
  uploads: number;
  pin_hash: string | null;
  pin_fails: number;
  locked_until: string | null;
  comment: string | null;
  /** JSON of the drop settings. */
  drop_settings: string | null;
  revoked_at: string | null;
  created_at: string;
  /** Set by the uplink guard (distinct addresses, accelerator); cleared by a re-enable. */
  suspended_at: string | null;
  suspended_reason: 'addresses' | 'accelerator' | null;
  /** App links (docs/app-plugins.md, "Public app pages"): the app, its view shown, the title; null on other links. */
  plugin_name: string | null;
  page_id: string | null;
  title: string | null;
  /** JSON `[{ref, rel}]`: the files an app link exposes, on the row's storage. */
  app_files: string | null;
}
/** shares: the token of a link whose storage was deleted (kept by a trigger; the link answers `revoked`). */
export interface ShareTombstonesTable extends TenantRow {
  token: string;
  kind: 'link' | 'drop';
  reason: 'storage_removed';
  created_at: string;
}

/** shares: one anonymous submission to a file request. */
export interface DropSubmissionsTable extends TenantRow {
  id: string;
  share_id: number;
  folder: string;
  uploader: string | null;
  ip: string | null;
  files: number;
  has_note: number;
  created_at: string;
  finished_at: string | null;
}
/** shares: an upload session that belongs to a drop submission. */
export interface DropFilesTable extends TenantRow {
  upload_id: string;
  submission_id: string;
  name: string;
  size: number;
  done: number;
  /** Place in the submission, 1 upward (0: written before the column existed). */
  position: Generated<number>;
}
