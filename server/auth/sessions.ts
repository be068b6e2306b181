/**
 * Server-side sessions. A cookie and a bearer token carry the same signed
 * JWT naming a row here; deleting the row (logout, user disabled) ends both.
 * Resolved principals are cached briefly by token (a hit skips the signature
 * check too) and dropped on every invalidation.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import { isBusy, type TenantScope, type Tx, type Unit } from '../db';
import { SessionsRepo, type SessionRecord } from './sessions.repo';
import { signJwt, verifyJwt, type SessionClaims } from './jwt';
import type { UsersRepo } from './users.repo';
import type { Principal } from './types';

const CACHE_MS = 10_000;
const TOUCH_MS = 60_000;
/** Bound of the caches: past it the oldest entries go (a miss only costs one verify and two queries). */
export const CACHE_MAX = 10_000;

/** A session as its owner's session list shows it. */
export type SessionRow = Omit<SessionRecord, 'user_id' | 'tenant_id'>;

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
  private repo: SessionsRepo;

  constructor(
    private db: Db,
    private users: UsersRepo,
    private key: Buffer,
    private ttlMs: number,
  ) {
    this.repo = new SessionsRepo(db);
  }

  /** Writes a session row in the person's tenant, with the caller's statements `also` in the same unit of work; `sign` makes its token. */
  async insert(
    s: TenantScope,
    userId: number,
    meta: { ip?: string | null; ua?: string | null; kind?: string },
    also?: (t: Tx) => Unit<void>,
  ): Promise<NewSession> {
    const sid = randomBytes(18).toString('base64url');
    const now = Date.now();
    const exp = now + this.ttlMs;
    const iso = new Date(now).toISOString();
    await this.repo.insert(
      s,
      {
        id: sid,
        user_id: userId,
        kind: meta.kind ?? 'login',
        created_at: iso,
        expires_at: new Date(exp).toISOString(),
        last_seen_at: iso,
        ip: meta.ip ?? null,
        ua: (meta.ua ?? '').slice(0, 300) || null,
      },
      also,
    );
    return { sid, userId, iat: now, exp };
  }

  /** The token (cookie and bearer) of a session row `insert` wrote. */
  async sign(s: NewSession): Promise<{ token: string; expires_at: string; sid: string }> {
    const token = await signJwt({ sid: s.sid, sub: s.userId, iat: Math.floor(s.iat / 1000), exp: Math.floor(s.exp / 1000) }, this.key);
    return { token, expires_at: new Date(s.exp).toISOString(), sid: s.sid };
  }

  /**
   * What `resolve` answers for `token` in tenant `scope` when it resolved the token less than the cache's
   * lifetime ago (dropped on every invalidation), without waiting for anything: the principal, or null for
   * another tenant's session; undefined when not cached: ask `resolve`.
   */
  recent(scope: TenantScope, token: string): Principal | null | undefined {
    const hit = this.cache.get(token);
    const now = Date.now();
    if (!hit || now - hit.at >= CACHE_MS || hit.exp <= now) return undefined;
    return hit.p.tenant_id === scope.tenant_id ? hit.p : null;
  }

  /**
   * The principal of a valid token whose session row is live in tenant `scope` (the request's: a session
   * made on another tenant's host is not found) and whose user is enabled; else null.
   */
  async resolve(scope: TenantScope, token: string): Promise<Principal | null> {
    const hit = this.recent(scope, token);
    if (hit !== undefined) return hit;
    const now = Date.now();
    const claims = await this.claims(token);
    if (!claims) return null;
    const row = await this.repo.owner(scope, claims.sid);
    if (!row || Date.parse(row.expires_at) <= now || row.user_id !== claims.sub) return null;
    const p = await this.users.principal(scope, row.user_id, claims.sid);
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
      this.repo.touch(p, claims.sid, new Date(now).toISOString()).catch((e: unknown) => {
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

  /** Ends one session (idempotent). */
  async revoke(s: TenantScope, sid: string): Promise<void> {
    await this.repo.remove(s, sid);
    this.forgetSession(sid);
  }

  /** A person's live sessions, most recently seen first. */
  list(s: TenantScope, userId: number): Promise<SessionRow[]> {
    return this.repo.live(s, userId, new Date().toISOString());
  }

  /** Ends one session of `userId` (false when it is not theirs or gone). */
  async revokeOf(s: TenantScope, userId: number, sid: string): Promise<boolean> {
    const ended = await this.repo.remove(s, sid, userId);
    if (ended) this.forgetSession(sid);
    return ended;
  }

  /** Ends every session of `userId` but `keep` (sign out everywhere else); answers how many ended. */
  async revokeOthers(s: TenantScope, userId: number, keep: string): Promise<number> {
    const n = await this.repo.removeOfUser(s, userId, keep);
    for (const [token, c] of this.cache) if (c.p.id === userId && c.p.sessionId !== keep) this.cache.delete(token);
    return n;
  }

  /** Ends every session of a user (disable, delete, password reset). */
  async revokeUser(s: TenantScope, userId: number): Promise<void> {
    await this.repo.removeOfUser(s, userId);
    this.forgetUser(userId);
  }

  private forgetSession(sid: string): void {
    for (const [token, c] of this.cache) if (c.p.sessionId === sid) this.cache.delete(token);
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

  /** Deletes the tenant's expired sessions; how many. */
  sweepExpired(s: TenantScope): Promise<number> {
    return this.repo.sweep(s, new Date().toISOString());
  }
}

/** Drops the oldest entries of a map kept in insertion (= recency) order until it fits CACHE_MAX. */
function trim<K, V>(m: Map<K, V>): void {
  for (const k of m.keys()) {
    if (m.size <= CACHE_MAX) break;
    m.delete(k);
  }
}
