/**
 * HS256 session tokens through `jose`. The token only names a server-side
 * session row (`sid`), so revoking the row revokes the token at once. The
 * header and claims keep the shape tokens had before jose (`sub` a number),
 * so sessions signed by an older build stay valid.
 */
import { SignJWT, jwtVerify, type JWTPayload } from 'jose';

export interface SessionClaims {
  sid: string;
  sub: number;
  exp: number;
  iat: number;
}

/** Signs `claims` with `key` (HS256). */
export async function signJwt(claims: SessionClaims, key: Buffer): Promise<string> {
  return new SignJWT({ sid: claims.sid, sub: claims.sub } as unknown as JWTPayload)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(key);
}

/** Claims of a valid, unexpired HS256 token signed with `key`, or null. Never throws. */
export async function verifyJwt(token: string, key: Buffer, nowSec = Math.floor(Date.now() / 1000)): Promise<SessionClaims | null> {
  try {
    const { payload: c } = await jwtVerify(token, key, { algorithms: ['HS256'], typ: 'JWT', currentDate: new Date(nowSec * 1000), clockTolerance: 0 });
    if (typeof c.sid !== 'string' || typeof c.sub !== 'number' || typeof c.exp !== 'number' || typeof c.iat !== 'number' || c.exp <= nowSec) return null;
    return { sid: c.sid, sub: c.sub, exp: c.exp, iat: c.iat };
  } catch {
    return null;
  }
}
