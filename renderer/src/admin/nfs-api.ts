/** The admin's NFS export routes (`/api/admin/gateways/nfs/exports`), typed. Rejections carry the server's envelope (ApiError). */
import { api } from '../api/client';
import type { NfsExportView } from '../../../server/contract';

export type NfsExportInput = Pick<NfsExportView, 'path' | 'clients' | 'user_id' | 'key_id' | 'read_only'>;

const base = '/api/admin/gateways/nfs/exports';

export const nfsExports = async () => (await api<{ exports: NfsExportView[] }>(base)).exports;
/** Adds (id null) or changes an export; answers it as stored (the path in its canonical form). */
export const saveNfsExport = async (id: number | null, body: NfsExportInput) =>
  (await api<{ export: NfsExportView }>(id === null ? base : `${base}/${id}`, { method: id === null ? 'POST' : 'PATCH', body })).export;
export const deleteNfsExport = (id: number) => api(`${base}/${id}`, { method: 'DELETE' });
