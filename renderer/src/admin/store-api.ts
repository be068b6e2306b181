/** The app store routes (docs/app-store.md "Routes") as the admin pages use them. */
import { api, ApiError } from '../api/client';
import type { Operation } from '../api/types';

export interface StoreRow {
  id: number;
  url: string;
  name: string | null;
  fingerprint: string;
  enabled: boolean;
  refreshed_at: string | null;
  last_error: string | null;
  /** Its licence revocation list has gone unread for 30 days. */
  licences_unchecked?: boolean;
  entries: number | null;
  added_at: string;
}
export type StoreKind = 'app' | 'language-pack' | 'storage';
export interface CatalogueEntry {
  store: number;
  id: string;
  kind: StoreKind;
  name: string;
  publisher: string;
  publisher_key: string | null;
  description: Record<string, string>;
  license: { model: 'free' | 'paid'; store?: string };
  /** `completeness`: a language pack's translated share of English, in percent, as its store measured it. */
  latest: { version: string; size: number; permissions: string[]; completeness?: number } | null;
  versions: Array<{ version: string; compatible: boolean; filedock_range: string }>;
  installed_version: string | null;
  update_available: boolean;
  categories: StoreCategory[];
  /** The icon's address through the service, or null. */
  icon: string | null;
  screenshots: Array<{ url: string; caption: Record<string, string> }>;
}
/** The catalogue's fixed categories (docs/app-store.md, "Categories and pictures"). */
export const CATEGORIES = ['files', 'documents', 'media', 'productivity', 'security', 'integration', 'developer', 'language', 'storage'] as const;
export type StoreCategory = (typeof CATEGORIES)[number];
export interface Catalogue {
  stores: Array<StoreRow & { error?: { error: string; details?: Record<string, unknown> } }>;
  total: number;
  entries: CatalogueEntry[];
}
export interface CatalogueQuery {
  q?: string;
  kind?: StoreKind;
  category?: StoreCategory;
  updates?: boolean;
  limit: number;
  offset: number;
}

const BASE = '/api/admin/app-store';

/**
 * Follows an install's operation until it ends: its progress as it goes, then its result, or its failure as
 * the refusal the synchronous route would have answered (code and details).
 */
async function asOperation(started: Promise<{ operation_id: string }>, progress: (fraction: number) => void) {
  const { operation_id: id } = await started;
  for (;;) {
    const op = await api<Operation>(`/api/files/ops/${encodeURIComponent(id)}`, { cache: 'no-store' });
    progress(op.progress);
    if (op.status === 'completed') return op.result as { name: string; version: string };
    if (op.status === 'failed' || op.status === 'cancelled')
      throw new ApiError(409, { error: op.error_code ?? op.status, message: op.error_text ?? op.error ?? op.status, details: op.error_params ?? {} }, null);
    await new Promise((r) => setTimeout(r, 400));
  }
}
const app = (id: string) => `${BASE}/apps/${encodeURIComponent(id)}`;

export const storeApi = {
  stores: () => api<{ stores: StoreRow[] }>(`${BASE}/stores`).then((r) => r.stores),
  connect: (url: string, pem: string) => api<StoreRow>(`${BASE}/stores`, { body: { url, public_key_pem: pem } }),
  setEnabled: (id: number, enabled: boolean) => api<StoreRow>(`${BASE}/stores/${id}`, { method: 'PATCH', body: { enabled } }),
  refresh: (id: number) => api<StoreRow>(`${BASE}/stores/${id}/refresh`, { method: 'POST' }),
  remove: (id: number) => api(`${BASE}/stores/${id}`, { method: 'DELETE' }),
  catalogue: (q: CatalogueQuery) => api<Catalogue>(`${BASE}/catalogue`, { query: { ...q, updates: q.updates ? 'true' : undefined } }),
  /** How many installed apps have a newer compatible version in an enabled store (0 while the store is switched off, without asking it). */
  updates: async () =>
    (await api<{ enabled: boolean }>(`${BASE}/config`)).enabled
      ? (await api<Catalogue>(`${BASE}/catalogue`, { query: { updates: 'true', limit: 1 } })).total
      : 0,
  /** Installs as an operation (docs/app-store.md, "Installs as operations"): refusals at once, then the op's progress. */
  install: (e: CatalogueEntry, progress: (fraction: number) => void) =>
    asOperation(api<{ operation_id: string }>(`${app(e.id)}/install`, { body: { store: e.store }, prefer: 'respond-async' }), progress),
  upgrade: (e: CatalogueEntry, approve: boolean, progress: (fraction: number) => void) =>
    asOperation(
      api<{ operation_id: string }>(`${app(e.id)}/upgrade`, {
        body: approve ? { store: e.store, approve_permissions: true } : { store: e.store },
        prefer: 'respond-async',
      }),
      progress,
    ),
  uninstall: (id: string) => api(app(id), { method: 'DELETE' }),
  /** Fetches a paid app's licence from its store by purchase code and sets it: the licence's status. */
  fetchLicence: (e: CatalogueEntry, code: string) => api<{ status: string }>(`${app(e.id)}/license`, { body: { store: e.store, code } }),
  /** The installed apps that update themselves. */
  autoUpdates: () => api<{ apps: string[] }>(`${BASE}/auto-updates`).then((r) => r.apps),
  setAutoUpdate: (id: string, enabled: boolean) => api(`${app(id)}/auto-update`, { method: 'PUT', body: { enabled } }),
};
