/** The trash and file versions (docs/protection.md). Bulk verbs answer per item. */
import { api, withQuery } from '../api/client';
import type { TrashItem, VersionView } from '../api/types';

export type { TrashItem, VersionView };

type PerItem<K extends string> = { [k in K]: unknown[] } & { failed: Array<{ id: number; error: string }> };

/** Items on storages the caller may change, newest first. */
export const listTrash = () => api<{ items: TrashItem[]; total: number }>('/api/files/trash', { query: { limit: 1000 } });
export const restoreItems = (ids: number[]) => api<PerItem<'restored'>>('/api/files/manager/restore', { body: { ids } });
/** `'all'` empties every trash the caller may change. */
export const purgeItems = (ids: number[] | 'all') => api<PerItem<'purged'>>('/api/files/trash/purge', { body: ids === 'all' ? { all: true } : { ids } });

export const listVersions = (path: string) => api<{ versions: VersionView[] }>('/api/files/versions', { query: { path } });
export const restoreVersion = (path: string, id: number) => api('/api/files/versions/restore', { body: { path, id } });
/** A version's bytes (`GET /api/files/versions/raw`), shown in the browser when `inline`. */
export const versionUrl = (path: string, id: number, inline: boolean) => withQuery('/api/files/versions/raw', { path, id, inline: inline ? 1 : undefined });
