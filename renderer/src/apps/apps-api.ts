/**
 * The app-plugin routes the file manager uses (SPEC App plugins;
 * docs/app-plugins.md "User routes"): the actions for a selection (kept five
 * minutes per selection, as the spec allows clients), running an action, and
 * the events of an open view. Each rejects with ApiError (the envelope's message).
 */
import { api } from '../api/client';
import type { SurfaceData, SurfaceEvent } from './surface/types';

export type Labels = Record<string, string>;

export interface AppAction {
  plugin: string;
  id: string;
  key: string;
  label: Labels;
  icon: string | null;
  view: string | null;
  view_placement: 'dialog' | 'panel' | 'page' | null;
  confirm: Labels | null;
  min_role?: string | null;
  danger?: boolean;
  output_mode?: string | null;
  read_only_ok?: boolean;
}

export interface AppViewRow {
  plugin: string;
  id: string;
  placement: 'dialog' | 'panel' | 'page';
  label: Labels | string;
  icon?: string | null;
}

/** "Open with": a file matching `ext`/`mime` opens in the app's view or action (rows added by the open-rules work). */
export interface OpenRule {
  plugin: string;
  ext?: string[] | string;
  mime?: string[] | string;
  view?: string;
  action?: string;
  label: Labels | string;
}

export interface ActionsAnswer {
  actions: AppAction[];
  views: AppViewRow[];
  open_rules?: OpenRule[];
}

const TTL = 5 * 60 * 1000;
const cache = new Map<string, { at: number; answer: Promise<ActionsAnswer> }>();
/** When the cache was last forgotten: for five minutes after, the browser's HTTP copy (max-age=300) is revalidated too. */
let forgottenAt = -Infinity;

/** The selection's key in the cache: its paths, sorted. */
export const selectionKey = (paths: string[]) => [...paths].sort().join('\n');

/** The app actions that apply to `paths` (all of them for no paths); the same selection asks again only after five minutes. */
export function actionsFor(paths: string[], now = Date.now()): Promise<ActionsAnswer> {
  const key = selectionKey(paths);
  const hit = cache.get(key);
  if (hit && now - hit.at < TTL) return hit.answer;
  const answer = api<ActionsAnswer>(`/api/files/plugins/actions${paths.length ? `?${paths.map((p) => `path=${encodeURIComponent(p)}`).join('&')}` : ''}`, {
    cache: Date.now() - forgottenAt < TTL ? 'no-cache' : undefined,
  });
  cache.set(key, { at: now, answer });
  if (cache.size > 200) cache.delete(cache.keys().next().value!);
  answer.catch(() => cache.delete(key));
  return answer;
}

/** Forgets every cached answer (an app installed, removed or switched off). */
export function forgetActions(): void {
  cache.clear();
  forgottenAt = Date.now();
}

export type RunAnswer = { surface: SurfaceData } | { op: string; job_id: string };

export const runAction = (plugin: string, action: string, paths: string[], params?: Record<string, unknown>) =>
  api<RunAnswer>(`/api/files/plugins/actions/${encodeURIComponent(plugin)}/${encodeURIComponent(action)}/run`, {
    body: { paths, ...(params ? { params } : {}) },
  });

export const openView = (plugin: string, view: string, path?: string | null) =>
  api<{ surface: SurfaceData }>(`/api/files/plugins/views/${encodeURIComponent(plugin)}/${encodeURIComponent(view)}`, { query: { path: path ?? undefined } });

export interface EventBody {
  paths?: string[];
  state?: unknown;
  event: SurfaceEvent;
  action_id?: string;
  data?: Record<string, unknown>;
}
export type EventAnswer = { surface: SurfaceData } | { op: string; job_id: string; surface?: SurfaceData };

export const sendEvent = (plugin: string, view: string, body: EventBody) =>
  api<EventAnswer>(`/api/files/plugins/views/${encodeURIComponent(plugin)}/${encodeURIComponent(view)}/event`, { body });

export const searchUsers = (plugin: string, q: string) =>
  api<{ users: Array<{ id: number | string; username: string; email: string }> }>('/api/files/plugins/users', { query: { plugin, q } });

/** Open rules matching a file by extension or type (`type/*` allowed). */
export function matchingRules(rules: OpenRule[] | undefined, name: string, mime?: string): OpenRule[] {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  const list = (v: string[] | string | undefined) => (v === undefined ? null : Array.isArray(v) ? v : [v]);
  return (rules ?? []).filter((r) => {
    const exts = list(r.ext);
    const mimes = list(r.mime);
    if (!exts && !mimes) return false;
    const byExt = !!exts?.some((e) => e.toLowerCase().replace(/^\./, '') === ext);
    const byMime = !!mime && !!mimes?.some((m) => (m.endsWith('/*') ? mime.startsWith(m.slice(0, -1)) : m === mime));
    return byExt || byMime;
  });
}
