/** The caller's own sessions, API keys and phone pairing (docs/auth.md). Each call rejects with ApiError. */
import { api } from '../api/client';
import type { ApiKeyCreated, ApiKeyView, KeyVerb, SessionView } from '../api/types';

/** What a new key asks for: `root` confines it to one folder; no `expires_in_days` means it never expires. */
export interface NewKey {
  name: string;
  verbs: KeyVerb[];
  root?: string | null;
  expires_in_days?: number;
}

export const sessions = async () => (await api<{ sessions: SessionView[] }>('/api/auth/sessions')).sessions;
/** Signs one session out; the current one too (the server then clears the cookie). */
export const revokeSession = (id: string) => api(`/api/auth/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
export const revokeOtherSessions = () => api<{ ok: true; revoked: number }>('/api/auth/sessions/revoke-others', { method: 'POST' });

export const keys = async () => (await api<{ keys: ApiKeyView[] }>('/api/auth/keys')).keys;
/** Makes a key; the answer's `token` is the only time its secret is shown. */
export const createKey = (body: NewKey) => api<ApiKeyCreated>('/api/auth/keys', { body });
/** Revokes a key (the caller's own, or anyone's for an admin); answers it in state `revoked`. */
export const revokeKey = (id: number) => api<{ key: ApiKeyView }>(`/api/auth/keys/${id}`, { method: 'DELETE' });

/** Pairs a phone: a key confined to `root`, expiring after `expires_in_days`. */
export const pairPhone = (body: { label: string; root: string; verbs: KeyVerb[]; expires_in_days: number }) =>
  api<ApiKeyCreated & { key_id: number }>('/api/auth/desktop/complete', { body });
