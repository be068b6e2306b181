/**
 * The person a provider vouches for, read from the ID token's claims (and the
 * userinfo answer's, for claims the token left out) through the configured
 * claim names.
 */
import type { OidcSettings } from './settings';

export interface Identity {
  sub: string;
  email: string | null;
  /** Only a literal `true` (or the string "true", which some providers send) counts. */
  emailVerified: boolean;
  username: string | null;
  /** null when the claim is absent: groups and role are then left as they are. */
  groups: string[] | null;
}

/** Groups beyond these are ignored, as are names longer than an account group may be. */
const MAX_GROUPS = 100;
const MAX_GROUP_NAME = 64;

/**
 * The value of claim `name`: the key itself first (claim names may hold dots,
 * e.g. URL-named claims), then a dotted path into nested objects
 * (`realm_access.roles`). undefined when absent.
 */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (name === '') return undefined;
  if (Object.hasOwn(claims, name)) return claims[name];
  let v: unknown = claims;
  for (const part of name.split('.')) {
    if (!v || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

function groupsOf(v: unknown): string[] | null {
  if (v === undefined || v === null) return null;
  const list = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  const names = list.map(text).filter((g): g is string => g !== null && g.length <= MAX_GROUP_NAME);
  return [...new Set(names)].slice(0, MAX_GROUPS);
}

/** Reads the identity from `claims` (ID token claims merged over userinfo). */
export function identityOf(claims: Record<string, unknown>, s: OidcSettings): Identity {
  const verified = claims.email_verified;
  return {
    sub: String(claims.sub),
    email: text(claimAt(claims, s.email_claim)),
    emailVerified: verified === true || verified === 'true',
    username: s.username_claim ? text(claimAt(claims, s.username_claim)) : null,
    groups: s.groups_claim ? groupsOf(claimAt(claims, s.groups_claim)) : null,
  };
}

/** True when one of the claims the settings map is missing from `claims` (then userinfo is asked). */
export const missingMapped = (claims: Record<string, unknown>, s: OidcSettings): boolean =>
  [s.email_claim, s.username_claim, s.groups_claim].some((n) => n !== '' && claimAt(claims, n) === undefined);
