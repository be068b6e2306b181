/** Share links and file requests (the item path goes in its share form, `<storage>://<path>`). */
import { api } from '../api/client';
import type { DropSettings, Share, ShareCreated } from '../api/types';
import { toSharePath } from '../lib/ui-path';

export interface ShareInput {
  ttl?: string;
  max_downloads?: number;
  pin?: string;
  /** Ask the server for an 8-digit PIN, returned once. */
  password?: boolean;
  comment?: string;
}

export const createShare = (uiPath: string, input: ShareInput) => api<ShareCreated>('/api/files/share', { body: { path: toSharePath(uiPath), ...input } });

export const createRequest = (uiPath: string, input: ShareInput & { drop_settings: DropSettings; max_uploads?: number }) =>
  api<ShareCreated>('/api/files/share', { body: { path: toSharePath(uiPath), kind: 'drop', ...input } });

export async function myShares(): Promise<Share[]> {
  return (await api<{ shares: Share[] }>('/api/files/share')).shares ?? [];
}

export const revokeShare = (id: number) => api(`/api/files/share/${id}`, { method: 'DELETE' });

/** Re-enables a link the uplink guard suspended (owner or admin). */
export const resumeShare = (id: number) => api<Share>(`/api/files/share/${id}/resume`, { method: 'POST' });
