/**
 * App licences, checked offline (SPEC App plugins rule 4, "App licence";
 * docs/app-plugins.md, "Licences"). A licence is a token a store issues:
 *
 *   base64url(JSON payload) "." base64url(Ed25519 signature of the payload's base64url text)
 *
 * payload `{v: 1, id, store, app, licensee, seats?, valid_until?, updates_until?, grace_days?}`.
 * The admin trusts store keys (`app_store_keys`) and keeps a local revocation
 * list; the status is computed here from the token, those keys, that list,
 * the clock and the number of people allowed the app. Nothing is fetched.
 */
import { createPublicKey, verify } from 'node:crypto';
import type { InstalledApp } from './registry/apps.repo';

export const LICENSE_STATUSES = [
  'free',
  'missing',
  'valid',
  'grace',
  'grace_expired',
  'expired',
  'invalid',
  'wrong_app',
  'revoked',
  'seats_exhausted',
  'unverified',
] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];
/** The statuses that let an app run; any other holds it (stopped, not removed). */
export const RUNNING: readonly LicenseStatus[] = ['free', 'valid', 'grace'];
/** Longest token accepted (a licence is a few hundred bytes). */
export const LICENSE_MAX_CHARS = 8192;

export interface LicensePayload {
  v: 1;
  id: string;
  store: string;
  app: string;
  licensee: string;
  seats?: number;
  valid_until?: string;
  updates_until?: string;
  grace_days?: number;
}

export interface LicenseAnswer {
  status: LicenseStatus;
  valid_until?: string;
  updates_until?: string;
}

export interface LicenseContext {
  /** The token the admin set for the app, or null. */
  token: string | null;
  /** SPKI PEM keys the admin trusts for a store name. */
  storeKeys: (store: string) => string[];
  revoked: (id: string) => boolean;
  /** People (enabled accounts) allowed to use the app; asked only when the licence counts seats. */
  users: () => number;
  now?: Date;
}

const DAY = 86_400_000;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;
const isDate = (v: unknown) => typeof v === 'string' && ISO.test(v) && Number.isFinite(Date.parse(v));
const fromB64url = (s: string) => (/^[A-Za-z0-9_-]+$/.test(s) ? Buffer.from(s, 'base64url') : null);

/** The payload of a token when its shape is right (signature not checked), else null. */
export function decodeLicense(token: string): { payload: LicensePayload; body: string; sig: Buffer } | null {
  if (typeof token !== 'string' || token.length > LICENSE_MAX_CHARS) return null;
  const parts = token.trim().split('.');
  if (parts.length !== 2) return null;
  const raw = fromB64url(parts[0]);
  const sig = fromB64url(parts[1]);
  if (!raw || !sig || sig.length !== 64) return null;
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
  if (!p || typeof p !== 'object' || Array.isArray(p)) return null;
  const word = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 200;
  if (p.v !== 1 || !word(p.id) || !word(p.store) || !word(p.app) || !word(p.licensee)) return null;
  if (p.seats !== undefined && !(Number.isInteger(p.seats) && (p.seats as number) >= 1)) return null;
  if (p.grace_days !== undefined && !(Number.isInteger(p.grace_days) && (p.grace_days as number) >= 0 && (p.grace_days as number) <= 3650)) return null;
  if (p.valid_until !== undefined && !isDate(p.valid_until)) return null;
  if (p.updates_until !== undefined && !isDate(p.updates_until)) return null;
  return { payload: p as unknown as LicensePayload, body: parts[0], sig };
}

/** Whether `sig` is a store key's signature of `body` (the payload's base64url text). */
function signedBy(pems: string[], body: string, sig: Buffer): boolean {
  return pems.some((pem) => {
    try {
      return verify(null, Buffer.from(body, 'ascii'), createPublicKey(pem), sig);
    } catch {
      return false;
    }
  });
}

/**
 * The licence status of `app`, in this order: `free` (the manifest asks for none), `missing`,
 * `invalid` (not a token), `unverified` (no trusted key of the signing store, or a store other than
 * the manifest's), `invalid` (signature), `wrong_app`, `revoked`, past `valid_until`: `grace` within
 * `grace_days`, then `grace_expired` (or `expired` without grace days), `seats_exhausted`, `valid`.
 */
export function licenseStatus(app: InstalledApp, c: LicenseContext): LicenseAnswer {
  if (!app.manifest.license?.required) return { status: 'free' };
  if (!c.token) return { status: 'missing' };
  const d = decodeLicense(c.token);
  if (!d) return { status: 'invalid' };
  const p = d.payload;
  const dates = {
    ...(p.valid_until && { valid_until: new Date(p.valid_until).toISOString() }),
    ...(p.updates_until && { updates_until: new Date(p.updates_until).toISOString() }),
  };
  const keys = p.store === app.manifest.license.store ? c.storeKeys(p.store) : [];
  if (!keys.length) return { status: 'unverified', ...dates };
  if (!signedBy(keys, d.body, d.sig)) return { status: 'invalid' };
  if (p.app !== app.id) return { status: 'wrong_app', ...dates };
  if (c.revoked(p.id)) return { status: 'revoked', ...dates };
  const now = (c.now ?? new Date()).getTime();
  if (p.valid_until && Date.parse(p.valid_until) <= now) {
    const grace = p.grace_days ?? 0;
    if (grace === 0) return { status: 'expired', ...dates };
    return { status: now < Date.parse(p.valid_until) + grace * DAY ? 'grace' : 'grace_expired', ...dates };
  }
  if (p.seats !== undefined && c.users() > p.seats) return { status: 'seats_exhausted', ...dates };
  return { status: 'valid', ...dates };
}
