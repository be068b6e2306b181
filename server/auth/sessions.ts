/**
 * Server-side sessions. A cookie and a bearer token carry the same signed
 * JWT naming a row here; deleting the row (logout, user disabled) ends both.
 * Resolved principals are cached briefly by token (a hit skips the signature
 * check too) and dropped on every invalidation.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import { isBusy } from '../db';
import { signJwt, verifyJwt } from './jwt';
import type { UsersRepo } from './users.repo';
import type { Principal } from './types';

const CACHE_MS = 10_000;
const TOUCH_MS = 60_000;
/** Bound of both maps: past it the oldest entries go (a miss only costs one verify and two queries). */
export const CACHE_MAX = 10_000;

export class Sessions {
  /** Keyed by the token itself: a token names exactly one session. */
  private cache = new Map<string, { p: Principal; at: number; exp: number }>();
  private lastTouch = new Map<string, number>();

  constructor(private db: Db, private users: UsersRepo, private key: Buffer, private ttlMs: number) {}

  /** Creates a session row and its token. */
  create(userId: number, meta: { ip?: string | null; ua?: string | null; kind?: string }): { token: string; expires_at: string; sid: string } {
    const sid = randomBytes(18).toString('base64url');
    const now = Date.now();
    const exp = now + this.ttlMs;
    const iso = new Date(now).toISOString();
    const expiresAt = new Date(exp).toISOString();
    this.db.sqlite
      .prepare('INSERT INTO sessions (id, user_id, kind, created_at, expires_at, last_seen_at, ip, ua) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(sid, userId, meta.kind ?? 'login', iso, expiresAt, iso, meta.ip ?? null, (meta.ua ?? '').slice(0, 300) || null);
    const token = signJwt({ sid, sub: userId, iat: Math.floor(now / 1000), exp: Math.floor(exp / 1000) }, this.key);
    return { token, expires_at: expiresAt, sid };
  }

  /** The principal of a valid token whose session row is live and whose user is enabled; else null. */
  resolve(token: string): Principal | null {
    const now = Date.now();
    const hit = this.cache.get(token);
    if (hit && now - hit.at < CACHE_MS && hit.exp > now) return hit.p;
    const claims = verifyJwt(token, this.key);
    if (!claims) return null;
    const row = this.db.sqlite.prepare('SELECT user_id, expires_at FROM sessions WHERE id = ?').get(claims.sid) as { user_id: number; expires_at: string } | undefined;
    if (!row || Date.parse(row.expires_at) <= now || row.user_id !== claims.sub) return null;
    const u = this.users.byId(row.user_id);
    if (!u || u.disabled) return null;
    const p: Principal = { id: u.id, email: u.email, username: u.username, role: u.role, groups: this.users.groupsOf(u.id), language: u.language, sessionId: claims.sid };
    this.cache.delete(token);
    this.cache.set(token, { p, at: now, exp: Math.min(Date.parse(row.expires_at), claims.exp * 1000) });
    trim(this.cache);
    if (now - (this.lastTouch.get(claims.sid) ?? 0) > TOUCH_MS) {
      this.lastTouch.delete(claims.sid);
      this.lastTouch.set(claims.sid, now);
      trim(this.lastTouch);
      try {
        this.db.sqlite.prepare('UPDATE sessions SET last_seen_at = ? WHERE id = ?').run(new Date(now).toISOString(), claims.sid);
      } catch (e) {
        // `last_seen_at` is informational: a database held by another process must not fail the request.
        if (!isBusy(e)) throw e;
        this.db.waits.sawBusy();
      }
    }
    return p;
  }

  revoke(sid: string): void {
    this.db.sqlite.prepare('DELETE FROM sessions WHERE id = ?').run(sid);
    for (const [token, c] of this.cache) if (c.p.sessionId === sid) this.cache.delete(token);
  }

  /** Ends every session of a user (disable, delete, password reset). */
  revokeUser(userId: number): void {
    this.db.sqlite.prepare('DELETE FROM sessions WHERE user_id = ?').run(userId);
    this.forgetUser(userId);
  }

  /** Drops cached principals of a user whose profile changed (role, groups, language). */
  forgetUser(userId: number): void {
    for (const [token, c] of this.cache) if (c.p.id === userId) this.cache.delete(token);
  }

  /** Principals held in the cache (bounded by CACHE_MAX). */
  get cached(): number {
    return this.cache.size;
  }

  sweepExpired(): number {
    return this.db.sqlite.prepare('DELETE FROM sessions WHERE expires_at < ?').run(new Date().toISOString()).changes;
  }
}

/** Drops the oldest entries of a map kept in insertion (= recency) order until it fits CACHE_MAX. */
function trim<K, V>(m: Map<K, V>): void {
  for (const k of m.keys()) {
    if (m.size <= CACHE_MAX) break;
    m.delete(k);
  }
}
