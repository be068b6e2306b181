import type { Perm } from './common';

/** An app's hold on a file (spec File entry `lock`); a value the app did not give is null. */
export interface FileLock {
  plugin: string;
  /** The app's name as shown to people (also in the `locked` error's details). */
  plugin_label: string;
  /** A short word the app chose (e.g. `signing`). */
  reason: string | null;
  /** A sentence for people. */
  reason_text: string | null;
  /** ISO 8601; null: until the app clears it. */
  until: string | null;
}

/** The spec's File entry (a listing or search row). */
export interface FileEntry {
  id: number;
  name: string;
  type: 'file' | 'dir';
  size: number;
  modified: string;
  mime?: string;
  etag?: string;
  is_image: boolean;
  is_video: boolean;
  thumb_url: string;
  locked: boolean;
  lock: FileLock | null;
  /** `<plugin>:<key>` items, at most 32. */
  app_state: string[];
  perm: Perm;
  /** Search results only: the entry's full UI path. */
  path?: string;
  /** Search results only: what matched (`metadata`: a search by filters alone). */
  match?: 'name' | 'content' | 'metadata';
  /** Content matches only: text around the first hit, the hit between U+E000 and U+E001 (docs/files-api.md). */
  snippet?: string;
  /** At and below an encrypted folder's root (docs/vault.md): the name and bytes are ciphertext. */
  encrypted?: boolean;
  /** The encrypted folder's id, on its root row only (`GET /api/vault/folders/{id}`). */
  vault_folder_id?: number;
}

export type SortKey = 'name' | 'size' | 'modified';
export type SortDir = 'asc' | 'desc';

/** `GET /api/files/manager` and `GET /api/files/search`. */
export interface Listing {
  path: string;
  entries: FileEntry[];
  total: number;
  /** `offline`: the backend cannot be reached now; the rows come from the catalogue. */
  storage: { name: string; driver: string; readonly: boolean; offline?: boolean };
  /** Keyset cursor of the next page (name sort), or null on the last page. */
  next_cursor?: string | null;
}

/** `GET /api/files/quota/storages` items. */
export interface StorageQuota {
  name: string;
  uid: string;
  used_bytes: number;
  file_count: number;
}

/** `GET /api/files/trash` items. */
export interface TrashItem {
  id: number;
  storage: string;
  storage_id: number;
  /** UI path the item had before it was deleted. */
  path: string;
  name: string;
  type: 'file' | 'dir';
  size: number;
  reason: 'delete' | 'infected';
  deleted_by: string | null;
  deleted_at: string;
}

/** `GET /api/files/versions` items. */
export interface VersionView {
  id: number;
  size: number;
  /** Modification time of the bytes when they were snapshotted (ISO). */
  modified: string;
  created_at: string;
  created_by: number | null;
}

/** `POST /api/files/delete`. */
export interface DeleteResult {
  deleted: string[];
  failed: Array<{ path: string; error: string }>;
  /** Deleted paths that could not go to the trash and are gone for good. */
  permanent: string[];
}
