/**
 * `sessions`: the server-side session rows (the auth module owns the table;
 * `sessions.ts` signs tokens and caches principals). Every end of a session is
 * one conditional DELETE, so "is it theirs" and "end it" cannot be split by
 * another request.
 */
import type { Db, TenantScope, Tx, Unit } from '../db';
import type { SessionsTable } from '../db/tables';

export type SessionRecord = SessionsTable;

export class SessionsRepo {
  constructor(private db: Db) {}

  /**
   * Writes a session row of the tenant and, in the same unit of work, the caller's other statements `also` (a
   * sign-in's audit record in the outbox): both commit or neither.
   */
  insert(s: TenantScope, row: Omit<SessionRecord, 'tenant_id'>, also?: (t: Tx) => Unit<void>): Promise<void> {
    const q = this.db.k.insertInto('sessions').values({ ...row, tenant_id: s.tenant_id });
    return this.db.async.unit(function* (t) {
      yield* t.run(q);
      if (also) yield* also(t);
    });
  }

  /** The session's owner and expiry (every request with a token not cached reads it), or undefined. */
  owner(s: TenantScope, sid: string): Promise<{ user_id: number; expires_at: string } | undefined> {
    return this.db.async.first(this.db.k.selectFrom('sessions').select(['user_id', 'expires_at']).where('tenant_id', '=', s.tenant_id).where('id', '=', sid));
  }

  /** Records when the session was last seen. */
  async touch(s: TenantScope, sid: string, at: string): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('sessions').set({ last_seen_at: at }).where('tenant_id', '=', s.tenant_id).where('id', '=', sid));
  }

  /** A person's sessions not expired at `now`, most recently seen first. */
  live(s: TenantScope, userId: number, now: string): Promise<Omit<SessionRecord, 'user_id' | 'tenant_id'>[]> {
    return this.db.async.all(
      this.db.k
        .selectFrom('sessions')
        .select(['id', 'kind', 'created_at', 'expires_at', 'last_seen_at', 'ip', 'ua'])
        .where('tenant_id', '=', s.tenant_id)
        .where('user_id', '=', userId)
        .where('expires_at', '>', now)
        .orderBy('last_seen_at', 'desc')
        .orderBy('created_at', 'desc'),
    );
  }

  /** Deletes one session, of `userId` when given; whether it was there (and theirs). */
  async remove(s: TenantScope, sid: string, userId?: number): Promise<boolean> {
    let q = this.db.k.deleteFrom('sessions').where('tenant_id', '=', s.tenant_id).where('id', '=', sid);
    if (userId !== undefined) q = q.where('user_id', '=', userId);
    return (await this.db.async.run(q)) > 0;
  }

  /** Deletes every session of `userId` but `keep` (every one when `keep` is undefined); how many. */
  async removeOfUser(s: TenantScope, userId: number, keep?: string): Promise<number> {
    let q = this.db.k.deleteFrom('sessions').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    if (keep !== undefined) q = q.where('id', '!=', keep);
    return this.db.async.run(q);
  }

  /** Deletes the tenant's sessions expired before `now`; how many. */
  sweep(s: TenantScope, now: string): Promise<number> {
    return this.db.async.run(this.db.k.deleteFrom('sessions').where('tenant_id', '=', s.tenant_id).where('expires_at', '<', now));
  }
}
