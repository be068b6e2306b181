/**
 * What the integration signs: the document key (changes with the file's
 * etag, names the node and its tenant), the fetch URL (HMAC over the subject and expiry
 * with the install's secret key, 1 hour), and the JWTs exchanged with the
 * document server (HS256 with the shared secret; nothing else accepted).
 */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { createHmac } from 'node:crypto';
import { DEFAULT_TENANT } from '../db';
import { safeEqual } from '../lib/crypto';

/** Signed document-fetch URL lifetime (spec: Limits). */
export const FETCH_TTL_MS = 3_600_000;
const FETCH_PURPOSE = 'docserver.fetch';

/** A document key's parts: the node and its tenant. `legacy`: a key made before keys carried the tenant (tenant 1's). */
export interface KeyParts {
  node: number;
  tenant_id: number;
  legacy?: boolean;
}

/**
 * The document key: `<node id>-t<tenant id>-<22 url-safe characters>` bound to the node, its tenant and its
 * current etag, so it changes whenever the bytes do (the document server caches by key) and is the same for
 * everyone opening the same bytes (co-editing). The callback's node is found in the key's tenant: the key is
 * what the document server's signed callback carries. A `legacy` key (`<node id>-<22>`, made before keys
 * carried the tenant) is rebuilt in its own form, so an editing session open across the upgrade still saves
 * (in tenant 1). Characters stay within the document server's key alphabet.
 */
export function docKey(secretKey: Buffer, k: KeyParts, etag: string): string {
  const bound = k.legacy ? `${k.node}` : `${k.tenant_id}\n${k.node}`;
  const mac = createHmac('sha256', secretKey).update(`docserver.key\n${bound}\n${etag}`).digest('base64url').slice(0, 22).replace(/_/g, '.');
  return k.legacy ? `${k.node}-${mac}` : `${k.node}-t${k.tenant_id}-${mac}`;
}

/** The node and tenant a document key names, or null when it is not one of ours. */
export function keyParts(key: string): KeyParts | null {
  const m = /^(\d{1,15})-(?:t(\d{1,15})-)?[A-Za-z0-9.-]{22}$/.exec(key);
  if (!m) return null;
  return m[2] === undefined ? { node: Number(m[1]), tenant_id: DEFAULT_TENANT.tenant_id, legacy: true } : { node: Number(m[1]), tenant_id: Number(m[2]) };
}

/**
 * What a fetch URL gives access to: a node's bytes (in its tenant), or a one-shot probe of the Test button.
 * A URL signed before it carried the tenant (no `tenant_id`) names a node of tenant 1; it expires within the hour.
 */
export type FetchSubject = { node: number; tenant_id?: number } | { probe: string };

const subjectText = (s: FetchSubject) => ('probe' in s ? `probe:${s.probe}` : s.tenant_id === undefined ? `node:${s.node}` : `node:${s.tenant_id}:${s.node}`);
const fetchSig = (secretKey: Buffer, s: FetchSubject, exp: number) =>
  createHmac('sha256', secretKey)
    .update(`${FETCH_PURPOSE}\n${subjectText(s)}\n${exp}`)
    .digest('base64url');

/** The query string of a fetch URL for `s`, valid FETCH_TTL_MS from `now`. */
export function signFetch(secretKey: Buffer, s: FetchSubject, now = Date.now()): string {
  const exp = Math.floor((now + FETCH_TTL_MS) / 1000);
  const q = new URLSearchParams('node' in s ? { node: String(s.node) } : { probe: s.probe });
  if ('node' in s && s.tenant_id !== undefined) q.set('tenant', String(s.tenant_id));
  q.set('exp', String(exp));
  q.set('sig', fetchSig(secretKey, s, exp));
  return q.toString();
}

/** Why a fetch URL is refused, or null when it holds (constant-time comparison). */
export function checkFetch(secretKey: Buffer, s: FetchSubject, exp: number, sig: string, now = Date.now()): string | null {
  if (!safeEqual(fetchSig(secretKey, s, exp), sig)) return 'signature refused: tampered';
  if (exp * 1000 < now) return 'signature refused: expired';
  if (exp * 1000 > now + FETCH_TTL_MS + 60_000) return 'signature refused: expiry too far ahead';
  return null;
}

const key = (secret: string) => new TextEncoder().encode(secret);

/** Signs `payload` for the document server (HS256). */
export function signJwt(secret: string, payload: Record<string, unknown>, ttlSeconds?: number): Promise<string> {
  const j = new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt();
  if (ttlSeconds) j.setExpirationTime(`${ttlSeconds}s`);
  return j.sign(key(secret));
}

/**
 * Verifies a token from the document server: HS256 only (so `alg: none` and
 * every other algorithm are refused), the shared secret, `exp` when present.
 * Returns the claims, or the reason it was refused.
 */
export async function verifyJwt(secret: string, token: string): Promise<{ claims: Record<string, unknown> } | { reason: string }> {
  try {
    const { payload } = await jwtVerify(token, key(secret), { algorithms: ['HS256'] });
    return { claims: payload as Record<string, unknown> };
  } catch (e) {
    if (e instanceof joseErrors.JWTExpired) return { reason: 'token expired' };
    if (e instanceof joseErrors.JOSEAlgNotAllowed) return { reason: 'algorithm not allowed' };
    if (e instanceof joseErrors.JWSSignatureVerificationFailed) return { reason: 'signature does not verify (wrong secret?)' };
    return { reason: `token refused (${(e as Error).message})` };
  }
}
