/**
 * `oidc_links`: which account an issuer's subject signs in as (the auth
 * module owns the table). Linking an account is one serializable unit that
 * refuses when the account already has another subject of the same issuer,
 * so two first sign-ins racing cannot leave one account with two. A link is
 * its account's tenant's, found only within it.
 */
import type { Db, TenantScope } from '../../db';
import type { UserRow } from '../users.repo';

export class OidcLinksRepo {
  constructor(private db: Db) {}

  /** The tenant's account linked to the issuer's subject. */
  async linkedUser(s: TenantScope, issuer: string, sub: string): Promise<UserRow | undefined> {
    const q = this.db.k
      .selectFrom('oidc_links')
      .innerJoin('users', 'users.id', 'oidc_links.user_id')
      .selectAll('users')
      .where('oidc_links.tenant_id', '=', s.tenant_id)
      .where('oidc_links.issuer', '=', issuer)
      .where('oidc_links.sub', '=', sub);
    return (await this.db.async.first(q)) as UserRow | undefined;
  }

  /** The tenant's account with this e-mail (the column compares without regard to case). */
  async userByEmail(s: TenantScope, email: string): Promise<UserRow | undefined> {
    return (await this.db.async.first(this.db.k.selectFrom('users').selectAll().where('tenant_id', '=', s.tenant_id).where('email', '=', email))) as
      | UserRow
      | undefined;
  }

  /** Whether the account is linked to a subject of this issuer. */
  async hasSubject(s: TenantScope, issuer: string, userId: number): Promise<boolean> {
    return !!(await this.db.async.first(this.subjects(s, issuer, userId)));
  }

  private subjects(s: TenantScope, issuer: string, userId: number) {
    return this.db.k.selectFrom('oidc_links').select('sub').where('tenant_id', '=', s.tenant_id).where('issuer', '=', issuer).where('user_id', '=', userId);
  }

  /** Links the subject to the account unless the account has another subject of this issuer; whether it is linked to this one now. */
  link(s: TenantScope, issuer: string, sub: string, userId: number, at: string): Promise<boolean> {
    const held = this.subjects(s, issuer, userId);
    const insert = this.db.k
      .insertInto('oidc_links')
      .values({ tenant_id: s.tenant_id, issuer, sub, user_id: userId, created_at: at, last_login_at: at })
      .onConflict((oc) => oc.doNothing());
    return this.db.async.unit(
      function* (t) {
        const subs = yield* t.all(held);
        if (subs.some((r) => r.sub !== sub)) return false;
        if (subs.length === 0) yield* t.run(insert);
        return true;
      },
      { isolation: 'serializable' },
    );
  }

  /** Records a sign-in through the link. */
  async touch(s: TenantScope, issuer: string, sub: string, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k.updateTable('oidc_links').set({ last_login_at: at }).where('tenant_id', '=', s.tenant_id).where('issuer', '=', issuer).where('sub', '=', sub),
    );
  }
}
