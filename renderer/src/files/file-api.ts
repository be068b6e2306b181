/** The file verbs of the API, typed. Each rejects with ApiError carrying the server's message. */
import { api, withQuery } from '../api/client';
import type { Listing, Operation, SortDir, SortKey, StorageQuota } from '../api/types';
import { joinPath } from '../lib/ui-path';

export interface ListQuery {
  path: string;
  sort: SortKey;
  dir: SortDir;
  limit: number;
  offset?: number;
  cursor?: string | null;
}

/** One page of a folder (the root lists the caller's storages). */
export function listFolder(q: ListQuery, signal?: AbortSignal): Promise<Listing> {
  return api<Listing>('/api/files/manager', { query: { ...q }, signal });
}

export interface SearchQuery {
  q: string;
  type?: '' | 'file' | 'dir';
  ext?: string;
  min_size?: number | '';
  max_size?: number | '';
  after?: string;
  before?: string;
  /** Photos and media by the date taken (inclusive; files without one are left out). */
  taken_from?: string;
  taken_to?: string;
  path?: string;
}

export function search(q: SearchQuery, signal?: AbortSignal): Promise<Listing> {
  return api<Listing>('/api/files/search', { query: { ...q }, signal });
}

export const mkdir = (dir: string, name: string) => api('/api/files/mkdir', { body: { path: joinPath(dir, name) } });
export const rename = (path: string, newName: string) => api('/api/files/rename', { body: { path, new_name: newName } });

/** Deletes a set; the answer lists what failed and why, per path. */
export const remove = (paths: string[]) =>
  api<{ deleted: string[]; failed: { path: string; error: string }[]; permanent?: string[] }>('/api/files/delete', { body: { paths } });

/**
 * Copy or move `from` into the folder `toDir` (the server places it inside an
 * existing folder under its own name); a large copy answers with an operation id.
 */
export const transfer = (verb: 'copy' | 'move', from: string, toDir: string) =>
  api<{ ok?: boolean; operation_id?: string }>(`/api/files/${verb}`, { body: { from, to: toDir, overwrite: false } });

/** An empty document of a `newdoc_types` key (`txt` for plain text) in `dir`. */
export const newFile = (dir: string, name: string, type: string) =>
  api<{ entry?: { name: string } }>('/api/files/manager', { query: { action: 'newfile' }, body: { path: dir, name, type } });

/**
 * Writes `content` to `path` (creating or replacing it). With the `etag` the file
 * was opened at, the server refuses (`conflict`) when someone changed it since.
 */
export const saveText = (path: string, content: string, etag?: string) =>
  api<{ entry?: { etag?: string } }>('/api/files/save-text', { body: { path, content, ...(etag ? { etag } : {}) } });

/** URL of the raw bytes (same-origin; the cookie authorises it): inline for previews, else a download. */
export const rawUrl = (path: string, inline = true) => withQuery('/api/files/raw', { path, inline: inline ? 1 : undefined });

export async function quotas(): Promise<StorageQuota[]> {
  const r = await api<StorageQuota[] | { storages: StorageQuota[] }>('/api/files/quota/storages');
  return Array.isArray(r) ? r : (r?.storages ?? []);
}

export const listOps = () => api<{ ops: Operation[] }>('/api/files/ops');
export const cancelOp = (id: string) => api(`/api/files/ops/${encodeURIComponent(id)}/cancel`, { method: 'POST' });

/** The address of a ZIP of `paths` (folders and files), for a plain browser download. */
export const zipUrl = (paths: string[]) => `/api/files/zip?${paths.map((p) => `path=${encodeURIComponent(p)}`).join('&')}`;

/** Re-reads a folder from its storage now (the Refresh button); resolves once the catalogue is up to date. */
export const refreshFolder = (path: string) => api('/api/files/refresh', { body: { path } });
