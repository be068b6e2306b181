/** Admin routes, typed. Every call rejects with ApiError carrying the server's message. */
import { api } from '../api/client';
import type {
  AdminStorage, ApiKeyCreated, ApiKeyView, AuditEvent, DriverDescriptor, Grant, GroupView, MfaEnrolledUser, OidcSettingsView, OidcTestResult,
  PermissionCatalogue, RoleView, SessionView, StorageMeter, SyncRun, UpdateStatus, User,
} from '../api/types';
import type { NewKey } from '../account/access-api';

export const drivers = async () => {
  const r = await api<DriverDescriptor[] | { drivers: DriverDescriptor[] }>('/api/admin/storage-drivers');
  return Array.isArray(r) ? r : r.drivers;
};
export const storages = async () => (await api<{ storages: AdminStorage[] }>('/api/admin/storages')).storages;
export const saveStorage = (id: number | null, body: Record<string, unknown>) =>
  id === null ? api<AdminStorage>('/api/admin/storages', { body }) : api<AdminStorage>(`/api/admin/storages/${id}`, { method: 'PATCH', body });
export const deleteStorage = (id: number) => api(`/api/admin/storages/${id}`, { method: 'DELETE' });
export const testStorage = (id: number | null, body: Record<string, unknown>) =>
  api<{ ok: boolean; error?: string; object_count?: number; sample_listing?: unknown }>(id === null ? '/api/admin/storages/test' : `/api/admin/storages/${id}/test`, { body });
export const syncNow = (id: number) => api<{ run_id: number }>(`/api/admin/storages/${id}/sync`, { method: 'POST' });
export const syncRuns = async (storageId: number) => (await api<{ runs: SyncRun[] }>('/api/admin/sync/runs', { query: { storage_id: storageId, limit: 20 } })).runs;
export const storageMeter = (id: number) => api<StorageMeter>(`/api/admin/storages/${id}/meter`);
export const setStorageBudget = (id: number, perDay: number) =>
  api<StorageMeter>(`/api/admin/storages/${id}/meter`, { method: 'PUT', body: { request_budget_per_day: perDay } });
export const syncRun = (id: number) => api<SyncRun & { errors_detail?: unknown[] }>(`/api/admin/sync/runs/${id}`);
export const grants = async (id: number) => (await api<{ grants: Grant[] }>(`/api/admin/storages/${id}/grants`)).grants;
export const putGrants = (id: number, g: Grant[]) => api(`/api/admin/storages/${id}/grants`, { method: 'PUT', body: { grants: g } });

export const users = async (q: string) => {
  const r = await api<{ users: User[] } | User[]>('/api/admin/users', { query: { q } });
  return Array.isArray(r) ? r : r.users;
};
export const createUser = (body: { email: string; username: string; role: string; password: string }) => api('/api/admin/users', { body });
export const updateUser = (id: number, body: Partial<{ role: string; password: string; disabled: boolean }>) => api(`/api/admin/users/${id}`, { method: 'PUT', body });
export const setDisabled = (id: number, disabled: boolean) => api(`/api/admin/users/${id}/${disabled ? 'disable' : 'enable'}`, { method: 'POST' });
/** `ok` when the e-mail or username is free; rejects with the field's code (`email_taken`, `username_invalid`, …) otherwise. */
export const checkAccount = (body: { email?: string; username?: string }) => api<{ ok: true }>('/api/auth/account/check', { body });
export const deleteUser = (id: number) => api(`/api/admin/users/${id}`, { method: 'DELETE' });
export const mfaEnrolled = async () => (await api<{ users: MfaEnrolledUser[] }>('/api/admin/mfa')).users;
export const resetMfa = (id: number) => api(`/api/admin/users/${id}/mfa/reset`, { method: 'POST' });

export const audit = async (q: Record<string, string | number>) => (await api<{ events: AuditEvent[] }>('/api/admin/audit', { query: q })).events;

export const protection = () => api<Record<string, unknown> & { antivirus?: Record<string, unknown> }>('/api/admin/protection');
export const patchProtection = (body: Record<string, unknown>) => api<Record<string, unknown>>('/api/admin/protection', { method: 'PATCH', body });
export const updateStatus = () => api<UpdateStatus>('/api/admin/update');
export const updateCheck = () => api<UpdateStatus>('/api/admin/update/check', { method: 'POST' });
/** Installs the pending release; answers with the fresh status read afterwards. */
export const updateApply = async () => {
  await api('/api/admin/update/apply', { method: 'POST' });
  return updateStatus();
};

export const oidc = () => api<OidcSettingsView>('/api/admin/auth/oidc');
/** Saves after the server ran discovery against the issuer; answers the saved settings. */
export const saveOidc = (body: Record<string, unknown>) => api<OidcSettingsView>('/api/admin/auth/oidc', { method: 'PUT', body });
export const testOidc = (body: Record<string, unknown>) => api<OidcTestResult>('/api/admin/auth/oidc/test', { body });

/** A person's sessions and keys, as the admin sees them. */
export const userSessions = async (id: number) => (await api<{ sessions: SessionView[] }>(`/api/admin/users/${id}/sessions`)).sessions;
export const revokeUserSession = (id: number, sid: string) => api(`/api/admin/users/${id}/sessions/${encodeURIComponent(sid)}`, { method: 'DELETE' });
export const revokeUserSessions = (id: number) => api<{ ok: true; revoked: number }>(`/api/admin/users/${id}/sessions`, { method: 'DELETE' });
export const userKeys = async (id: number) => (await api<{ keys: ApiKeyView[] }>(`/api/admin/users/${id}/keys`)).keys;
/** Makes a key owned by person `id` (same body as their own; the token is shown this once). */
export const createUserKey = (id: number, body: NewKey) => api<ApiKeyCreated>(`/api/admin/users/${id}/keys`, { body });

/** Roles and permissions: the catalogue with the built-in matrix, custom roles, a person's exceptions, groups. */
export const permissions = () => api<PermissionCatalogue>('/api/admin/permissions');
export const roles = async () => (await api<{ roles: RoleView[] }>('/api/admin/roles')).roles;
export const saveRole = (id: number | null, body: { name: string; permissions: Record<string, boolean> }) =>
  id === null ? api<{ role: RoleView }>('/api/admin/roles', { body }) : api<{ role: RoleView }>(`/api/admin/roles/${id}`, { method: 'PATCH', body });
export const deleteRole = (id: number) => api(`/api/admin/roles/${id}`, { method: 'DELETE' });
export const setCustomRole = (userId: number, roleId: number | null) => api<{ user: User }>(`/api/admin/users/${userId}`, { method: 'PATCH', body: { custom_role_id: roleId } });
export const exceptions = async (userId: number) => (await api<{ permissions: Record<string, boolean> }>(`/api/admin/users/${userId}/permissions`)).permissions;
/** Replaces the person's exceptions; a permission left out inherits again. */
export const putExceptions = async (userId: number, p: Record<string, boolean>) =>
  (await api<{ permissions: Record<string, boolean> }>(`/api/admin/users/${userId}/permissions`, { method: 'PUT', body: { permissions: p } })).permissions;
export const groups = async () => (await api<{ groups: GroupView[] }>('/api/admin/groups')).groups;

/** Whether anyone may create an account on the sign-in page. */
export const authSettings = () => api<{ allow_signup: boolean }>('/api/admin/auth/settings');
export const patchAuthSettings = (body: { allow_signup: boolean }) => api<{ allow_signup: boolean }>('/api/admin/auth/settings', { method: 'PATCH', body });
