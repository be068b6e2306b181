/**
 * Server-side sessions. A cookie and a bearer token carry the same signed
 * JWT naming a row here; deleting the row (logout, user disabled) ends both.
 * Resolved principals are cached briefly and dropped on every invalidation.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import { signJwt, verifyJwt, type SessionClaims } from './jwt';
import type { UsersRepo } from './users.repo';
import type { Principal } from './types';

const CACHE_MS = 10_000;
const TOUCH_MS = 60_000;
/** Verified tokens remembered (oldest dropped first): jose's verification is async WebCrypto on every request otherwise. */
const VERIFIED_MAX = 10_000;

export class Sessions {
  private cache = new Map<string, { p: Principal; at: number; exp: number }>();
  private lastTouch = new Map<string, number>();
  private verified = new Map<string, SessionClaims>();

  constructor(private db: Db, private users: UsersRepo, private key: Buffer, private ttlMs: number) {}

  /** Creates a session row and its token. */
  async create(userId: number, meta: { ip?: string | null; ua?: string | null; kind?: string }): Promise<{ token: string; expires_at: string; sid: string }> {
    const sid = randomBytes(18).toString('base64url');
    const now = Date.now();
    const exp = now + this.ttlMs;
    const iso = new Date(now).toISOString();
    const expiresAt = new Date(exp).toISOString();
    this.db.sqlite
      .prepare('INSERT INTO sessions (id, user_id, kind, created_at, expires_at, last_seen_at, ip, ua) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(sid, userId, meta.kind ?? 'login', iso, expiresAt, iso, meta.ip ?? null, (meta.ua ?? '').slice(0, 300) || null);
    const token = await signJwt({ sid, sub: userId, iat: Math.floor(now / 1000), exp: Math.floor(exp / 1000) }, this.key);
    return { token, expires_at: expiresAt, sid };
  }

  /** The principal of a valid token whose session row is live and whose user is enabled; else null. */
  async resolve(token: string): Promise<Principal | null> {
    const claims = await this.claims(token);
    if (!claims) return null;
    const now = Date.now();
    const hit = this.cache.get(claims.sid);
    if (hit && now - hit.at < CACHE_MS && hit.exp > now) return hit.p;
    const row = this.db.sqlite.prepare('SELECT user_id, expires_at FROM sessions WHERE id = ?').get(claims.sid) as { user_id: number; expires_at: string } | undefined;
    if (!row || Date.parse(row.expires_at) <= now || row.user_id !== claims.sub) return null;
    const p = this.users.principal(row.user_id, claims.sid);
    if (!p) return null;
    this.cache.set(claims.sid, { p, at: now, exp: Date.parse(row.expires_at) });
    if (now - (this.lastTouch.get(claims.sid) ?? 0) > TOUCH_MS) {
      this.lastTouch.set(claims.sid, now);
      this.db.sqlite.prepare('UPDATE sessions SET last_seen_at = ? WHERE id = ?').run(new Date(now).toISOString(), claims.sid);
    }
    return p;
  }

  /**
   * The token's claims when its signature holds and it has not expired. A
   * signature, once checked, holds until `exp`: only the expiry is re-checked
   * for a remembered token (the session row is still read, so a revoked
   * session ends at once).
   */
  private async claims(token: string): Promise<SessionClaims | null> {
    const known = this.verified.get(token);
    if (known) {
      if (known.exp > Date.now() / 1000) return known;
      this.verified.delete(token);
      return null;
    }
    const c = await verifyJwt(token, this.key);
    if (c) {
      if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, c);
    }
    return c;
  }

  revoke(sid: string): void {
    this.db.sqlite.prepare('DELETE FROM sessions WHERE id = ?').run(sid);
    this.cache.delete(sid);
  }

  /** Ends every session of a user (disable, delete, password reset). */
  revokeUser(userId: number): void {
    this.db.sqlite.prepare('DELETE FROM sessions WHERE user_id = ?').run(userId);
    for (const [sid, c] of this.cache) if (c.p.id === userId) this.cache.delete(sid);
  }

  /** Drops cached principals of a user whose profile changed (role, groups, language). */
  forgetUser(userId: number): void {
    for (const [sid, c] of this.cache) if (c.p.id === userId) this.cache.delete(sid);
  }

  sweepExpired(): number {
    return this.db.sqlite.prepare('DELETE FROM sessions WHERE expires_at < ?').run(new Date().toISOString()).changes;
  }
}
