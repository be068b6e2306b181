/**
 * Server-side sessions. A cookie and a bearer token carry the same signed
 * JWT naming a row here; deleting the row (logout, user disabled) ends both.
 * Resolved principals are cached briefly by token (a hit skips the signature
 * check too) and dropped on every invalidation.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import type { SessionsTable } from '../db/tables';
import { isBusy } from '../db';
import { signJwt, verifyJwt, type SessionClaims } from './jwt';
import type { UsersRepo } from './users.repo';
import type { Principal } from './types';

const CACHE_MS = 10_000;
const TOUCH_MS = 60_000;
/** Bound of the caches: past it the oldest entries go (a miss only costs one verify and two queries). */
export const CACHE_MAX = 10_000;

/** A session as its owner's session list shows it. */
export type SessionRow = Omit<SessionsTable, 'user_id'>;

/** A session row just written, before its token is signed. */
export interface NewSession {
  sid: string;
  userId: number;
  iat: number;
  exp: number;
}

export class Sessions {
  /** Keyed by the token itself: a token names exactly one session. */
  private cache = new Map<string, { p: Principal; at: number; exp: number }>();
  private lastTouch = new Map<string, number>();
  private verified = new Map<string, SessionClaims>();

  constructor(private db: Db, private users: UsersRepo, private key: Buffer, private ttlMs: number) {}

  /** Writes a session row (synchronous: it may run inside a transaction); `sign` makes its token. */
  insert(userId: number, meta: { ip?: string | null; ua?: string | null; kind?: string }): NewSession {
    const sid = randomBytes(18).toString('base64url');
    const now = Date.now();
    const exp = now + this.ttlMs;
    const iso = new Date(now).toISOString();
    this.db.sqlite
      .prepare('INSERT INTO sessions (id, user_id, kind, created_at, expires_at, last_seen_at, ip, ua) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(sid, userId, meta.kind ?? 'login', iso, new Date(exp).toISOString(), iso, meta.ip ?? null, (meta.ua ?? '').slice(0, 300) || null);
    return { sid, userId, iat: now, exp };
  }

  /** The token (cookie and bearer) of a session row `insert` wrote. */
  async sign(s: NewSession): Promise<{ token: string; expires_at: string; sid: string }> {
    const token = await signJwt({ sid: s.sid, sub: s.userId, iat: Math.floor(s.iat / 1000), exp: Math.floor(s.exp / 1000) }, this.key);
    return { token, expires_at: new Date(s.exp).toISOString(), sid: s.sid };
  }

  /** The principal of a valid token whose session row is live and whose user is enabled; else null. */
  async resolve(token: string): Promise<Principal | null> {
    const now = Date.now();
    const hit = this.cache.get(token);
    if (hit && now - hit.at < CACHE_MS && hit.exp > now) return hit.p;
    const claims = await this.claims(token);
    if (!claims) return null;
    const { k } = this.db;
    const row = await this.db.async.first(k.selectFrom('sessions').select(['user_id', 'expires_at']).where('id', '=', claims.sid));
    if (!row || Date.parse(row.expires_at) <= now || row.user_id !== claims.sub) return null;
    const p = await this.users.principalAsync(row.user_id, claims.sid);
    if (!p) return null;
    this.cache.delete(token);
    this.cache.set(token, { p, at: now, exp: Math.min(Date.parse(row.expires_at), claims.exp * 1000) });
    trim(this.cache);
    if (now - (this.lastTouch.get(claims.sid) ?? 0) > TOUCH_MS) {
      this.lastTouch.delete(claims.sid);
      this.lastTouch.set(claims.sid, now);
      trim(this.lastTouch);
      // `last_seen_at` is informational: the request does not wait for it, and a database that is busy
      // (held by another process, or away) must not fail it; the next touch a minute later tries again.
      this.db.async.run(k.updateTable('sessions').set({ last_seen_at: new Date(now).toISOString() }).where('id', '=', claims.sid)).catch((e: unknown) => {
        if (isBusy(e) || (e as { code?: string }).code === 'database_busy') this.db.waits.sawBusy();
      });
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
      this.verified.set(token, c);
      trim(this.verified);
    }
    return c;
  }

  revoke(sid: string): void {
    this.db.sqlite.prepare('DELETE FROM sessions WHERE id = ?').run(sid);
    for (const [token, c] of this.cache) if (c.p.sessionId === sid) this.cache.delete(token);
  }

  /** A person's live sessions, most recently seen first. */
  list(userId: number): SessionRow[] {
    return this.db.sqlite
      .prepare('SELECT id, kind, created_at, expires_at, last_seen_at, ip, ua FROM sessions WHERE user_id = ? AND expires_at > ? ORDER BY last_seen_at DESC, created_at DESC')
      .all(userId, new Date().toISOString()) as SessionRow[];
  }

  /** Ends one session of `userId` (false when it is not theirs or gone). */
  revokeOf(userId: number, sid: string): boolean {
    const owner = this.db.sqlite.prepare('SELECT user_id FROM sessions WHERE id = ?').pluck().get(sid) as number | undefined;
    if (owner !== userId) return false;
    this.revoke(sid);
    return true;
  }

  /** Ends every session of `userId` but `keep` (sign out everywhere else); answers how many ended. */
  revokeOthers(userId: number, keep: string): number {
    const n = this.db.sqlite.prepare('DELETE FROM sessions WHERE user_id = ? AND id != ?').run(userId, keep).changes;
    for (const [token, c] of this.cache) if (c.p.id === userId && c.p.sessionId !== keep) this.cache.delete(token);
    return n;
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

  /** Drops every cached principal (a custom role changed). */
  forgetAll(): void {
    this.cache.clear();
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
