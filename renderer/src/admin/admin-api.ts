/** Admin routes, typed. Every call rejects with ApiError carrying the server's message. */
import { api } from '../api/client';
import type {
  AdminStorage,
  ApiKeyCreated,
  ApiKeyView,
  AuditEvent,
  DriverDescriptor,
  Grant,
  GroupView,
  MfaEnrolledUser,
  OidcSettingsView,
  OidcTestResult,
  PermissionCatalogue,
  RoleView,
  SessionView,
  StorageMeter,
  SyncRun,
  UpdateStatus,
  User,
  ExternalService,
  ExternalTestReport,
} from '../api/types';
import type { NewKey } from '../account/access-api';
import type {
  ReplicaAudit,
  ReplicaDrill,
  ReplicaFailure,
  ReplicaMode,
  ReplicaReport,
  ReplicaRule,
  ReplicaSettings,
  ReplicaStatus,
  ReplicaTarget,
} from '../../../server/contract';
import type {
  AdminStatus,
  TenantQuotaUsage,
  AssistantSettingsView,
  BackupSettings,
  BackupsView,
  HomesSetting,
  MetricsSettingsView,
} from '../../../server/contract';

export const drivers = async () => {
  const r = await api<DriverDescriptor[] | { drivers: DriverDescriptor[] }>('/api/admin/storage-drivers');
  return Array.isArray(r) ? r : r.drivers;
};
export const storages = async () => (await api<{ storages: AdminStorage[] }>('/api/admin/storages')).storages;
export const saveStorage = (id: number | null, body: Record<string, unknown>) =>
  id === null ? api<AdminStorage>('/api/admin/storages', { body }) : api<AdminStorage>(`/api/admin/storages/${id}`, { method: 'PATCH', body });
export const deleteStorage = (id: number) => api(`/api/admin/storages/${id}`, { method: 'DELETE' });
export const testStorage = (id: number | null, body: Record<string, unknown>) =>
  api<{ ok: boolean; error?: string; object_count?: number; sample_listing?: unknown }>(
    id === null ? '/api/admin/storages/test' : `/api/admin/storages/${id}/test`,
    { body },
  );
export const syncNow = (id: number) => api<{ run_id: number }>(`/api/admin/storages/${id}/sync`, { method: 'POST' });
export const syncRuns = async (storageId: number) =>
  (await api<{ runs: SyncRun[] }>('/api/admin/sync/runs', { query: { storage_id: storageId, limit: 20 } })).runs;
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
export const updateUser = (id: number, body: Partial<{ role: string; password: string; disabled: boolean }>) =>
  api(`/api/admin/users/${id}`, { method: 'PUT', body });
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
export const setCustomRole = (userId: number, roleId: number | null) =>
  api<{ user: User }>(`/api/admin/users/${userId}`, { method: 'PATCH', body: { custom_role_id: roleId } });
export const exceptions = async (userId: number) => (await api<{ permissions: Record<string, boolean> }>(`/api/admin/users/${userId}/permissions`)).permissions;
/** Replaces the person's exceptions; a permission left out inherits again. */
export const putExceptions = async (userId: number, p: Record<string, boolean>) =>
  (await api<{ permissions: Record<string, boolean> }>(`/api/admin/users/${userId}/permissions`, { method: 'PUT', body: { permissions: p } })).permissions;
export const groups = async () => (await api<{ groups: GroupView[] }>('/api/admin/groups')).groups;

/** Whether anyone may create an account on the sign-in page. */
export const homes = () => api<HomesSetting>('/api/admin/homes');
export const patchHomes = (body: Partial<Pick<HomesSetting, 'enabled' | 'storage_id' | 'folder'>>) =>
  api<HomesSetting>('/api/admin/homes', { method: 'PATCH', body });
export const setRbac = (id: number, on: boolean) => api<AdminStorage>(`/api/admin/storages/${id}`, { method: 'PATCH', body: { rbac_enabled: on } });
export const user = async (id: number) => (await api<{ user: User }>(`/api/admin/users/${id}`)).user;
export const metrics = () => api<MetricsSettingsView>('/api/admin/metrics');
export const patchMetrics = (body: Partial<Pick<MetricsSettingsView, 'enabled' | 'access'>>) =>
  api<MetricsSettingsView>('/api/admin/metrics', { method: 'PATCH', body });
export const metricsToken = async (renew = false) => (await api<{ token: string }>('/api/admin/metrics/token', renew ? { method: 'POST' } : {})).token;
export const authSettings = () => api<{ allow_signup: boolean }>('/api/admin/auth/settings');
export const patchAuthSettings = (body: { allow_signup: boolean }) => api<{ allow_signup: boolean }>('/api/admin/auth/settings', { method: 'PATCH', body });

export const externalServices = async () => (await api<{ services: ExternalService[] }>('/api/admin/external')).services;
export const saveExternal = (name: string, body: Record<string, string>) =>
  api<ExternalService>(`/api/admin/external/${encodeURIComponent(name)}`, { method: 'PUT', body });
export const testExternal = (name: string) => api<ExternalTestReport>(`/api/admin/external/${encodeURIComponent(name)}/test`, { method: 'POST' });
/** Replication (docs/replication.md): targets, rules, settings, the failure log, live status, report, audit and drill. */
export const replicaTargets = async () => (await api<{ targets: ReplicaTarget[] }>('/api/admin/replication-targets')).targets;
export const saveReplicaTarget = (id: number | null, body: Record<string, unknown>) =>
  id === null
    ? api<ReplicaTarget>('/api/admin/replication-targets', { body })
    : api<ReplicaTarget>(`/api/admin/replication-targets/${id}`, { method: 'PATCH', body });
export const deleteReplicaTarget = (id: number) => api<{ ok: true; unlinked: number }>(`/api/admin/replication-targets/${id}`, { method: 'DELETE' });
/** Links a storage to a target (`null` unlinks). */
export const linkReplica = (storageId: number, targetId: number | null) =>
  api<AdminStorage>(`/api/admin/storages/${storageId}`, { method: 'PATCH', body: { replica_target_id: targetId } });
export const replicaRules = () => api<{ rules: ReplicaRule[]; modes: ReplicaMode[] }>('/api/admin/replica/rules');
export const saveReplicaRule = (id: number | null, body: Partial<Pick<ReplicaRule, 'path_pattern' | 'mode' | 'priority' | 'enabled' | 'description'>>) =>
  id === null ? api<ReplicaRule>('/api/admin/replica/rules', { body }) : api<ReplicaRule>(`/api/admin/replica/rules/${id}`, { method: 'PATCH', body });
export const deleteReplicaRule = (id: number) => api(`/api/admin/replica/rules/${id}`, { method: 'DELETE' });
export const replicaSettings = () => api<ReplicaSettings>('/api/admin/replica/settings');
export const patchReplicaSettings = (body: Partial<ReplicaSettings>) => api<ReplicaSettings>('/api/admin/replica/settings', { method: 'PATCH', body });
export const replicaFailures = async (unresolved: boolean) =>
  (await api<{ failures: ReplicaFailure[] }>('/api/admin/replica/failures', { query: { unresolved, limit: 200 } })).failures;
export const replicaFixAll = () => api<{ queued: number }>('/api/admin/replica/fix', { method: 'POST' });
export const replicaFixOne = (path: string, op: string) => api<{ queued: number; op_id: string }>('/api/admin/replica/fix-one', { body: { path, op } });
export const replicaStatus = () => api<ReplicaStatus>('/api/admin/replica/status');
/** The last report, or null before the first run (204). */
export const replicaReport = async () => (await api<ReplicaReport | undefined>('/api/admin/replica/report')) ?? null;
export const runReplicaReport = () => api<ReplicaReport>('/api/admin/replica/report/run-now', { method: 'POST' });
export const replicaAudit = async () => (await api<ReplicaAudit | undefined>('/api/admin/replica/audit')) ?? null;
export const replicaDrill = async () => (await api<ReplicaDrill | undefined>('/api/admin/replica/drill')) ?? null;
export const runReplicaDrill = () => api<{ op_id: string }>('/api/admin/replica/drill/run-now', { method: 'POST' });
/** The assistant's settings (the API key never comes back: `api_key_set` says whether one is stored). */
export type { AssistantSettingsView as AssistantSettings } from '../../../server/contract';
export interface AssistantTest {
  ok: boolean;
  models: string[];
  reply: string;
}
export const assistant = () => api<AssistantSettingsView>('/api/admin/assistant');
export const saveAssistant = (body: Record<string, unknown>) => api<AssistantSettingsView>('/api/admin/assistant', { method: 'PATCH', body });
export const testAssistant = () => api<AssistantTest>('/api/admin/assistant/test', { method: 'POST' });

/** How the service is holding up now (background work, uplink, drives, budgets, the sleep inhibitor). */
export const status = () => api<AdminStatus>('/api/admin/status');
/** The admin's tenant's quotas and use (multi-tenant mode only: 404 otherwise). */
export const quotas = () => api<{ quotas: TenantQuotaUsage }>('/api/admin/quotas').then((r) => r.quotas);
/** Backups of Filedock itself (docs/operations.md): settings, the archives in the target, "back up now". */
export const backups = () => api<BackupsView>('/api/admin/backups');
export const patchBackups = (body: Partial<BackupSettings>) => api<BackupsView>('/api/admin/backups/settings', { method: 'PATCH', body });
export const backupNow = () => api<{ op_id: string }>('/api/admin/backups/run', { method: 'POST' });
