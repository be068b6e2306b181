/**
 * The OIDC settings: their stored shape (a flat record in the settings table,
 * the client secret sealed with the install's secret key), the checks every
 * field passes, what SERVICE_OIDC_* overrides, the admin view (secret as
 * `***`, environment-set fields named), and how an admin's edit merges in.
 * Pure functions: the service does the I/O.
 */
import { AppError, validation } from '../../errors';
import { decrypt, encrypt, isEncrypted } from '../../lib/crypto';
import type { OidcSettingsFields, OidcSettingsView } from '../../contract';

/** The stored settings: the contract's fields, the client secret sealed (or ''). */
export type OidcSettings = OidcSettingsFields;

export const OIDC_DEFAULTS: Readonly<OidcSettings> = Object.freeze({
  enabled: true,
  issuer: '',
  client_id: '',
  client_secret: '',
  scopes: 'openid email profile',
  email_claim: 'email',
  username_claim: 'preferred_username',
  groups_claim: 'groups',
  admin_group: '',
  redirect_url: '',
  label: '',
});

export const MASK = '***';
export const CALLBACK_PATH = '/api/auth/oidc/callback';

/** The fields SERVICE_OIDC_* can set (plain values; the secret is sealed when applied). */
export const ENV_FIELDS = ['issuer', 'client_id', 'client_secret', 'scopes', 'groups_claim', 'admin_group', 'redirect_url', 'label'] as const;
export type OidcEnv = Partial<Record<(typeof ENV_FIELDS)[number], string>>;

type Field = keyof OidcSettings;
const FIELDS = Object.keys(OIDC_DEFAULTS) as Field[];

/** The stored record as settings: unknown keys dropped, missing or mistyped ones at their default. */
export function normalize(raw: Record<string, unknown> | null | undefined): OidcSettings {
  const out = { ...OIDC_DEFAULTS } as Record<Field, string | boolean>;
  for (const f of FIELDS) if (raw && typeof raw[f] === typeof OIDC_DEFAULTS[f]) out[f] = raw[f] as string | boolean;
  return out as unknown as OidcSettings;
}

/** True when sign-in can be offered: an issuer and a client id, and not switched off. */
export const isActive = (s: OidcSettings): boolean => s.enabled && s.issuer !== '' && s.client_id !== '';

const LOOPBACK_HOST = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/** http is allowed for an identity provider on this machine only (a provider in a test, or behind a local proxy). */
export const isLoopbackUrl = (u: URL): boolean => LOOPBACK_HOST.test(u.hostname);

function checkUrl(field: Field, v: string, httpLoopbackOnly: boolean): void {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw validation(field, 'must be an http(s) URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw validation(field, 'must be an http(s) URL');
  if (httpLoopbackOnly && u.protocol === 'http:' && !isLoopbackUrl(u)) throw validation(field, 'must be https (http only for a provider on this machine)');
  if (u.username || u.password || u.hash) throw validation(field, 'must not carry credentials or a fragment');
}

const CLAIM = /^[\x21-\x7e]{1,128}$/;
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** Throws `validation_failed` naming the first field that does not fit. */
export function check(s: OidcSettings): void {
  if (s.issuer !== '') checkUrl('issuer', s.issuer, true);
  if (s.redirect_url !== '') {
    checkUrl('redirect_url', s.redirect_url, false);
    if (new URL(s.redirect_url).pathname !== CALLBACK_PATH) throw validation('redirect_url', `must end in ${CALLBACK_PATH}`);
  }
  if (s.client_id.length > 256 || /[\x00-\x1f]/.test(s.client_id)) throw validation('client_id', 'at most 256 printable characters');
  const scopes = s.scopes.split(' ').filter(Boolean);
  if (!scopes.includes('openid') || !scopes.every((x) => SCOPE.test(x)) || s.scopes.length > 1024)
    throw validation('scopes', 'space-separated scopes including openid');
  if (!CLAIM.test(s.email_claim)) throw validation('email_claim', 'a claim name');
  if (s.username_claim !== '' && !CLAIM.test(s.username_claim)) throw validation('username_claim', 'a claim name or empty');
  if (s.groups_claim !== '' && !CLAIM.test(s.groups_claim)) throw validation('groups_claim', 'a claim name or empty');
  if (s.admin_group.length > 64) throw validation('admin_group', 'at most 64 characters');
  if (s.label.length > 64 || /[\x00-\x1f]/.test(s.label)) throw validation('label', 'at most 64 characters');
  if ((s.issuer === '') !== (s.client_id === '') && s.enabled) throw validation(s.issuer === '' ? 'issuer' : 'client_id', 'issuer and client id go together');
}

/** The env fields that are set (non-empty), in ENV_FIELDS order. */
export const envManaged = (env: OidcEnv): Array<(typeof ENV_FIELDS)[number]> => ENV_FIELDS.filter((f) => (env[f] ?? '') !== '');

/** The plain client secret; '' when none or when it cannot be opened (another install's key). */
export function openSecret(s: OidcSettings, key: Buffer): string {
  if (!isEncrypted(s.client_secret)) return '';
  try {
    return decrypt(key, s.client_secret);
  } catch {
    return '';
  }
}

/** `s` with every set SERVICE_OIDC_* value applied (the secret sealed, or kept when unchanged); `s` itself when nothing differs. */
export function overlayEnv(s: OidcSettings, env: OidcEnv, key: Buffer): OidcSettings {
  let out = s;
  for (const f of envManaged(env)) {
    const v = env[f]!;
    if (f === 'client_secret') {
      if (openSecret(out, key) !== v) out = { ...out, client_secret: encrypt(key, v) };
    } else if (out[f] !== v) out = { ...out, [f]: v };
  }
  return out;
}

/** What an admin may send: every field optional; `client_secret` `***` keeps, '' clears. */
export type OidcPatch = Partial<Omit<OidcSettings, 'client_secret'>> & { client_secret?: string };

/**
 * `current` with `patch` applied and checked. A field set by the environment
 * may only be sent unchanged (`validation_failed`, reason names the variable).
 */
export function merge(current: OidcSettings, patch: OidcPatch, env: OidcEnv, key: Buffer): OidcSettings {
  const managed = new Set<string>(envManaged(env));
  const next = { ...current };
  for (const f of FIELDS) {
    const v = patch[f];
    if (v === undefined) continue;
    if (f === 'client_secret') {
      if (v === MASK) continue;
      if (managed.has(f) && v !== openSecret(current, key)) throw envRefusal(f);
      next.client_secret = v === '' ? '' : encrypt(key, String(v));
      continue;
    }
    if (managed.has(f) && v !== current[f]) throw envRefusal(f);
    (next as Record<Field, unknown>)[f] = typeof v === 'string' ? v.trim() : v;
  }
  check(next);
  return next;
}

const envRefusal = (f: string) =>
  new AppError(
    'validation_failed',
    { field: f, reason: `set by SERVICE_OIDC_${f.toUpperCase()}` },
    { field: f, reason: 'set_by_environment', env: `SERVICE_OIDC_${f.toUpperCase()}` },
  );

/** The admin view: the secret as `***` (or '' when none), the fields the environment holds, the callback URL to register. */
export function view(s: OidcSettings, env: OidcEnv, redirectUrl: string): OidcSettingsView {
  return {
    ...s,
    client_secret: s.client_secret ? MASK : '',
    configured: s.issuer !== '' && s.client_id !== '',
    active: isActive(s),
    env_managed: envManaged(env),
    effective_redirect_url: redirectUrl,
  };
}
