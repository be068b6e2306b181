/**
 * Device mode: a paired phone signs every request with the API key it got
 * from a pairing link (`/pair#<token>`), kept in localStorage. No key stored
 * means the ordinary cookie session. The key never travels in a URL the
 * server sees: the pairing link carries it in the fragment.
 */

const STORE = 'filedock.device_key';
/** `fdk_<id>_<secret>`, as `POST /api/auth/keys` and pairing answer it. */
const TOKEN = /^fdk_\d{1,12}_[A-Za-z0-9_-]{20,200}$/;

/** The stored key, or null (no key, or storage unavailable). */
export function deviceKey(): string | null {
  try {
    return globalThis.localStorage?.getItem(STORE) ?? null;
  } catch {
    return null;
  }
}

/** Forgets the stored key (the server keeps it until its owner revokes it). Idempotent. */
export function forgetDeviceKey(): void {
  try {
    globalThis.localStorage?.removeItem(STORE);
  } catch {
    // Storage blocked: there was nothing to forget.
  }
}

/** `Authorization: Bearer <key>` while a key is stored, else nothing (the cookie speaks). */
export function authHeaders(): Record<string, string> {
  const k = deviceKey();
  return k ? { Authorization: `Bearer ${k}` } : {};
}

/**
 * On `/pair#<token>`: stores a well-formed token and removes it from the
 * address bar and history (`history.replaceState` to `/`). Answers 'stored',
 * 'bad' for a pairing link without a usable token (also removed from the
 * address bar), or null on any other page.
 */
export function adoptPairingLink(loc: Pick<Location, 'pathname' | 'hash'> = location, hist: Pick<History, 'replaceState'> = history): 'stored' | 'bad' | null {
  if (loc.pathname !== '/pair') return null;
  const token = decodeURIComponent(loc.hash.replace(/^#/, '')).trim();
  hist.replaceState(null, '', '/');
  if (!TOKEN.test(token)) return 'bad';
  localStorage.setItem(STORE, token);
  return 'stored';
}
