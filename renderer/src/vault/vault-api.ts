/**
 * The `/api/vault` routes (docs/vault.md "Server"), typed. The server stores
 * only wrapped keys and proofs; every secret is made and opened in the browser.
 */
import { api, fetchSigned, toApiError, withQuery } from '../api/client';
import type { KdfParams, VaultRecord } from './crypto';

export type VaultView = VaultRecord & { created_at: string; updated_at: string };

export interface VaultFolder {
  id: number;
  /** The UI path of the folder's root. */
  path: string;
  key_version: number;
  owner: { id: number; name: string };
  members: { id: number; name: string; display_name?: string }[];
  /** The caller's wrapped keys, one per version they hold. */
  keys: { version: number; wrapped_key: string }[];
}

export const getVault = async (): Promise<VaultView | null> => (await api<{ vault: VaultView | null }>('/api/vault')).vault;

export const createVault = (body: VaultRecord & { auth: string; recovery_auth: string }) => api<{ vault: VaultView }>('/api/vault', { method: 'PUT', body });

export const changePassphrase = (body: { auth: string; kdf: KdfParams; wrapped_private_key: string; new_auth: string }) =>
  api<void>('/api/vault/passphrase', { body });

export const recover = (body: { recovery_auth: string; kdf: KdfParams; wrapped_private_key: string; new_auth: string }) =>
  api<void>('/api/vault/recover', { body });

export const listFolders = async (): Promise<VaultFolder[]> => (await api<{ folders: VaultFolder[] }>('/api/vault/folders')).folders;

export const getFolder = async (id: number): Promise<VaultFolder> => (await api<{ folder: VaultFolder }>(`/api/vault/folders/${id}`)).folder;

/** Makes the folder (plain name: its parent is not encrypted); its first key follows through `setMembers` (the wrap needs the id). */
export const createFolder = async (path: string): Promise<VaultFolder> => (await api<{ folder: VaultFolder }>('/api/vault/folders', { body: { path } })).folder;

export const setMembers = async (id: number, keyVersion: number, members: { user_id: number; wrapped_key: string }[]): Promise<VaultFolder> =>
  (await api<{ folder: VaultFolder }>(`/api/vault/folders/${id}/members`, { method: 'PUT', body: { key_version: keyVersion, members } })).folder;

export const thumbUrl = (path: string) => withQuery('/api/vault/thumb', { path });

/** Stores a thumbnail already encrypted as its own small FDV1 file. */
export async function putThumb(path: string, bytes: Uint8Array): Promise<void> {
  const r = await fetchSigned(thumbUrl(path), {
    method: 'PUT',
    headers: { 'Content-Type': 'application/octet-stream' },
    body: bytes as Uint8Array<ArrayBuffer>,
  });
  if (!r.ok) throw await toApiError(r);
}
