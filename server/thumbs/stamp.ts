/**
 * Signed thumbnail addresses, so an <img> in a listing loads without the
 * session: `/api/files/thumb/<id>?exp=<unix>&sig=<hex>` where sig is the hex
 * HMAC-SHA256 of `<id>.<exp>` under a signing key derived from the install's
 * secret key, and the `?token&size` form whose token signs id, size and expiry.
 * Expiries are rounded up to the hour, so listings made within one hour carry
 * identical URLs and the browser cache keeps working.
 */
import { createHmac } from 'node:crypto';
import { safeEqual } from '../lib/crypto';

export const THUMB_SIZES = [64, 128, 256, 512] as const;
const DEFAULT_TTL_MS = 24 * 3_600_000;
const ROUND_S = 3600;

let signingKey: Buffer | null = null;
let ttlMs = DEFAULT_TTL_MS;

/** Sets the key and lifetime once at boot; `ttl` 0 (or less) means the default 24 h. */
export function configureStamps(secretKey: Buffer, ttl: number): void {
  signingKey = createHmac('sha256', secretKey).update('thumbnail stamps').digest();
  ttlMs = ttl > 0 ? ttl : DEFAULT_TTL_MS;
}

const sign = (data: string): string => {
  if (!signingKey) throw new Error('thumbnail stamps are not configured');
  return createHmac('sha256', signingKey).update(data).digest('hex');
};
const expiry = (now: number): number => Math.ceil((now + ttlMs) / 1000 / ROUND_S) * ROUND_S;

/** The stamped URL of a node's thumbnail, valid for the configured lifetime. */
export function thumbUrl(nodeId: number, now: number = Date.now()): string {
  const exp = expiry(now);
  return `/api/files/thumb/${nodeId}?exp=${exp}&sig=${sign(`${nodeId}.${exp}`)}`;
}

/** True when `sig` signs `<id>.<exp>` and `exp` (unix seconds) has not passed. */
export function verifyStamp(nodeId: number, exp: string | undefined, sig: string | undefined, now: number = Date.now()): boolean {
  if (!exp || !sig || !/^\d{1,12}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return false;
  return Number(exp) * 1000 > now && safeEqual(sign(`${nodeId}.${exp}`), sig);
}

/** A token for `GET /api/files/thumb?token&size`: `<id>.<size>.<exp>.<sig>`. */
export function thumbToken(nodeId: number, size: number, now: number = Date.now()): string {
  const exp = expiry(now);
  return `${nodeId}.${size}.${exp}.${sign(`${nodeId}.${size}.${exp}`)}`;
}

/** The node id a live token grants for `size`, or null. */
export function verifyToken(token: string | undefined, size: number, now: number = Date.now()): number | null {
  const m = /^(\d{1,12})\.(\d{1,4})\.(\d{1,12})\.([0-9a-f]{64})$/.exec(token ?? '');
  if (!m || Number(m[2]) !== size || Number(m[3]) * 1000 <= now) return null;
  return safeEqual(sign(`${m[1]}.${m[2]}.${m[3]}`), m[4]) ? Number(m[1]) : null;
}
