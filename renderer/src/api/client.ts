/**
 * The one door to the server: same-origin cookies (or, on a paired device,
 * its API key as a bearer token), JSON bodies on every write, and every
 * failure turned into an ApiError carrying the envelope's `message` (which
 * the UI shows as it is, already in the reader's language).
 */
import type { ErrorEnvelope } from './types';
import { authHeaders } from '../device/device-key';
import { withBase } from '../lib/base';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly params: Record<string, unknown>;
  readonly details: Record<string, unknown>;
  /** Seconds from a `Retry-After` header, when the server sent one. */
  readonly retryAfter: number | null;

  constructor(status: number, env: ErrorEnvelope, retryAfter: number | null) {
    // Older refusals put an English sentence in `error` and no `message`.
    super(env.message || env.error || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = env.message ? env.error : status === 0 ? 'network' : 'unknown';
    this.params = env.params ?? {};
    this.details = env.details ?? {};
    this.retryAfter = retryAfter;
  }
}

/** True for failures where retrying later may work: no answer, or a 5xx/408/429. */
export const isTransient = (e: unknown): boolean =>
  e instanceof ApiError ? e.status === 0 || e.status === 408 || e.status === 429 || e.status >= 500 : e instanceof TypeError;

type Query = Record<string, string | number | boolean | null | undefined>;

/** `path?k=v` with empty values left out. */
export function withQuery(path: string, q?: Query): string {
  if (!q) return path;
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') sp.set(k, String(v));
  const s = sp.toString();
  return s ? `${path}?${s}` : path;
}

let onUnauthenticated: (() => void) | null = null;
/** Called when a request answers 401 outside sign-in, so the app can show the sign-in page. */
export function setUnauthenticatedHandler(fn: (() => void) | null): void {
  onUnauthenticated = fn;
}

/** Turns a non-OK Response into an ApiError (never resolves for an OK one). */
export async function toApiError(res: Response): Promise<ApiError> {
  let env: ErrorEnvelope = { error: `http_${res.status}`, message: '' };
  try {
    const body = (await res.json()) as ErrorEnvelope;
    if (body && typeof body.error === 'string') env = body;
  } catch {
    env.message = `${res.status} ${res.statusText}`.trim();
  }
  const ra = Number(res.headers.get('Retry-After'));
  return new ApiError(res.status, env, Number.isFinite(ra) && ra > 0 ? ra : null);
}

interface Options {
  method?: string;
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  /** Sign-in calls handle their own 401. */
  quiet401?: boolean;
  /** The browser cache mode (`no-cache` revalidates an answer the server lets clients keep). */
  cache?: RequestCache;
  /** `Prefer` (RFC 7240), e.g. `respond-async` for a route that can answer 202 with an operation. */
  prefer?: string;
}

/** JSON request; resolves with the parsed body (undefined for 204) or rejects with ApiError. */
export async function api<T>(path: string, opts: Options = {}): Promise<T> {
  const method = opts.method ?? (opts.body === undefined ? 'GET' : 'POST');
  const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders() };
  if (method !== 'GET' && method !== 'HEAD') headers['Content-Type'] = 'application/json';
  if (opts.prefer) headers.Prefer = opts.prefer;
  let res: Response;
  try {
    res = await fetch(withBase(withQuery(path, opts.query)), {
      method,
      headers,
      credentials: 'same-origin',
      body: opts.body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(opts.body),
      signal: opts.signal,
      cache: opts.cache,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, { error: 'network', message: '' }, null);
  }
  if (!res.ok) {
    const err = await toApiError(res);
    if (res.status === 401 && !opts.quiet401) onUnauthenticated?.();
    throw err;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** `fetch` of a same-origin URL outside the JSON door (raw bytes), signed like `api()`; rejects only on network failure. */
export function fetchSigned(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(withBase(url), { credentials: 'same-origin', ...init, headers: { ...authHeaders(), ...(init.headers as Record<string, string> | undefined) } });
}
