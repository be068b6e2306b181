/** The platform operator's tenant routes (`/api/platform/tenants`; docs/tenants.md), typed. */
import { api, fetchSigned, toApiError } from '../api/client';
import type { TenantView } from '../../../server/contract';

export type TenantQuotas = TenantView['quotas'];
export interface TenantChange {
  name?: string;
  hostnames?: string[];
  status?: TenantView['status'];
  quotas?: TenantQuotas;
  branding?: { name?: string; colour?: string };
}

export const tenants = async () => (await api<{ tenants: TenantView[] }>('/api/platform/tenants')).tenants;
export const createTenant = (b: { slug: string; name: string; hostnames: string[]; admin: { email: string; password: string } }) =>
  api<{ tenant: TenantView }>('/api/platform/tenants', { body: b });
export const changeTenant = (id: number, b: TenantChange) => api<{ tenant: TenantView }>(`/api/platform/tenants/${id}`, { method: 'PATCH', body: b });
export const deleteTenant = (id: number) => api(`/api/platform/tenants/${id}`, { method: 'DELETE' });
export const removeLogo = (id: number) => api(`/api/platform/tenants/${id}/logo`, { method: 'DELETE' });

/** Uploads a logo's bytes as they are (the server knows the type by them). */
export async function uploadLogo(id: number, file: Blob): Promise<void> {
  const res = await fetchSigned(`/api/platform/tenants/${id}/logo`, { method: 'PUT', body: file, headers: { 'Content-Type': 'application/octet-stream' } });
  if (!res.ok) throw await toApiError(res);
}

/** Host names as typed: separated by commas or white space, blanks dropped. */
export const hostList = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);
