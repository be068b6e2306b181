/**
 * The public routes of an app link (SPEC App plugins, "Public pages of apps"):
 * the link state, the PIN, the events, the jobs they queued, and the exposed files by `ref`. A PIN
 * answer's `download_token`, when sent, rides along as `dt` (as for file links).
 */
import { api } from '../../api/client';
import type { SurfaceData } from '../surface/types';

export interface PublicFile {
  ref: string;
  name: string;
  size?: number;
  mime?: string;
}
export interface LinkState {
  /** `active`, `expired`, `revoked` or `suspended`. */
  state?: string;
  revoked?: boolean;
  requires_pin?: boolean;
  app?: { plugin: string; page: string; title?: string; files?: PublicFile[] };
  [k: string]: unknown;
}

/** A job the page queued, as its visitor follows it (`GET …/ops/{job_id}`): outputs only as exposed files' refs. */
export interface PageJob {
  job_id: string;
  status: 'pending' | 'running' | 'ok' | 'failed' | 'cancelled';
  progress: number;
  message: string | null;
  outputs: Array<{ ref: string }>;
  error_text?: string | null;
}

/** The token of `/s/{token}` (also `/s/{token}/…`), or null. */
export const tokenOf = (pathname: string): string | null => /^\/s\/([^/]+)/.exec(pathname)?.[1] ?? null;

export class PublicLink {
  dt: string | null = null;
  constructor(readonly token: string) {}
  private url(tail = '') {
    return `/api/public/s/${encodeURIComponent(this.token)}${tail}`;
  }
  private q() {
    return this.dt ? { dt: this.dt } : undefined;
  }
  state() {
    return api<LinkState>(this.url(), { query: this.q(), quiet401: true, cache: 'no-store' });
  }
  async pin(pin: string) {
    const r = await api<{ download_token?: string } | undefined>(this.url('/pin'), { body: { pin }, quiet401: true });
    if (r?.download_token) this.dt = r.download_token;
  }
  /** No body opens the page (and counts a visit); later events carry the surface's state. */
  event(body?: { state?: unknown; event: string; action_id?: string; data?: Record<string, unknown> }) {
    return api<{ surface: SurfaceData } | { accepted: boolean; job_id: string }>(this.url('/event'), {
      method: 'POST',
      body: body ?? {},
      query: this.q(),
      quiet401: true,
    });
  }
  job(id: string) {
    return api<PageJob>(this.url(`/ops/${encodeURIComponent(id)}`), { query: this.q(), quiet401: true, cache: 'no-store' });
  }
  fileUrl(ref: string) {
    return `${this.url(`/file/${encodeURIComponent(ref)}`)}${this.dt ? `?dt=${encodeURIComponent(this.dt)}` : ''}`;
  }
}
