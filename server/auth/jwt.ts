/**
 * Minimal HS256 JWT for session tokens. The token only names a server-side
 * session row (`sid`), so revoking the row revokes the token at once.
 */
import { createHmac } from 'node:crypto';
import { safeEqual } from '../lib/crypto';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const HEADER = b64({ alg: 'HS256', typ: 'JWT' });

export interface SessionClaims {
  sid: string;
  sub: number;
  exp: number;
  iat: number;
}

export function signJwt(claims: SessionClaims, key: Buffer): string {
  const body = `${HEADER}.${b64(claims)}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

/** Claims of a valid, unexpired token, or null. Never throws. */
export function verifyJwt(token: string, key: Buffer, nowSec = Math.floor(Date.now() / 1000)): SessionClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== HEADER) return null;
  const sig = createHmac('sha256', key).update(`${parts[0]}.${parts[1]}`).digest('base64url');
  if (!safeEqual(sig, parts[2])) return null;
  try {
    const c = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as SessionClaims;
    if (typeof c.sid !== 'string' || typeof c.sub !== 'number' || typeof c.exp !== 'number' || c.exp <= nowSec) return null;
    return c;
  } catch {
    return null;
  }
}
