/** The trash and file versions (docs/protection.md). Bulk verbs answer per item. */
import { api } from '../api/client';

export interface TrashItem {
  id: number;
  storage: string;
  storage_id: number;
  /** Original UI path. */
  path: string;
  name: string;
  type: 'file' | 'dir';
  size: number;
  reason: 'delete' | 'infected' | string;
  deleted_by: string | number | null;
  deleted_at: string;
}

export interface Version {
  id: number;
  size: number;
  modified: string;
  created_at: string;
  created_by: string | number | null;
}

type PerItem<K extends string> = { [k in K]: unknown[] } & { failed: Array<{ id: number; error: string }> };

/** Items on storages the caller may change, newest first. */
export const listTrash = () => api<{ items: TrashItem[]; total: number }>('/api/files/trash', { query: { limit: 1000 } });
export const restoreItems = (ids: number[]) => api<PerItem<'restored'>>('/api/files/manager/restore', { body: { ids } });
/** `'all'` empties every trash the caller may change. */
export const purgeItems = (ids: number[] | 'all') => api<PerItem<'purged'>>('/api/files/trash/purge', { body: ids === 'all' ? { all: true } : { ids } });

export const listVersions = (path: string) => api<{ versions: Version[] }>('/api/files/versions', { query: { path } });
export const restoreVersion = (path: string, id: number) => api('/api/files/versions/restore', { body: { path, id } });
