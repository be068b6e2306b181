/**
 * Which account an OIDC identity signs in as, and what the provider keeps up
 * to date on it (docs/auth.md, "OIDC: the account"):
 *   1. the issuer's `sub` already linked → that account;
 *   2. else an account with the same e-mail, linked now only when the
 *      provider says the address is verified and the account has no other
 *      subject of this issuer;
 *   3. else a new account (`auth_driver` oidc, no password), role `admin`
 *      when in the admin group, `user` otherwise.
 * Then, when the token carries the groups claim: an account the provider
 * created gets exactly the provider's groups and its admin role follows the
 * admin group (promoted and demoted); a local account linked by e-mail only
 * gains groups and can be promoted, never demoted. A provider-created
 * account also follows an e-mail change at the provider when the new address
 * is free.
 */
import type { Db } from '../../db';
import { nowIso, type TenantScope } from '../../db';
import { OidcLinksRepo } from './links.repo';
import { isAppError } from '../../errors';
import type { EventBus } from '../../events';
import type { UsersRepo, UserRow } from '../users.repo';
import type { UpdateUser, UsersService } from '../users.service';
import type { Identity } from './claims';
import { OidcError } from './errors';
import type { OidcSettings } from './settings';

export class OidcAccounts {
  private links: OidcLinksRepo;

  constructor(private d: { db: Db; repo: UsersRepo; users: UsersService; bus: EventBus; warn: (msg: string) => void }) {
    this.links = new OidcLinksRepo(d.db);
  }

  /**
   * The account `who` signs in as, found, linked or created, and updated from
   * the claims. Throws `OidcError`: `oidc_account` (no e-mail, unusable
   * e-mail, e-mail held by an account linked to another subject),
   * `oidc_unverified`, `account_disabled` (nothing is linked or updated then).
   * `t`: the tenant the sign-in was started in; the account is found or made there.
   */
  async resolve(t: TenantScope, issuer: string, who: Identity, s: OidcSettings): Promise<UserRow> {
    const user = (await this.links.linkedUser(t, issuer, who.sub)) ?? (await this.firstSignIn(t, issuer, who, s));
    if (user.disabled) throw new OidcError('account_disabled', `account ${user.id} is disabled`);
    await this.sync(user, who, s);
    await this.links.touch(user, issuer, who.sub, nowIso());
    return (await this.d.repo.byId(user, user.id))!;
  }

  private async firstSignIn(t: TenantScope, issuer: string, who: Identity, s: OidcSettings): Promise<UserRow> {
    if (!who.email) throw new OidcError('oidc_account', `no e-mail in claim "${s.email_claim}"`);
    const existing = await this.links.userByEmail(t, who.email);
    if (existing) {
      if (!who.emailVerified) throw new OidcError('oidc_unverified', `account ${existing.id} has this e-mail; email_verified is not true`);
      const other = () => new OidcError('oidc_account', `account ${existing.id} is linked to another subject of this issuer`);
      if (await this.links.hasSubject(t, issuer, existing.id)) throw other();
      if (existing.disabled) throw new OidcError('account_disabled', `account ${existing.id} is disabled`);
      if (!(await this.links.link(t, issuer, who.sub, existing.id, nowIso()))) throw other();
      return existing;
    }
    const role = s.admin_group !== '' && (who.groups ?? []).includes(s.admin_group) ? 'admin' : 'user';
    let created: number;
    try {
      created = (
        await this.d.users.create(t, {
          email: who.email,
          username: await this.freeUsername(t, who.username),
          role,
          groups: who.groups ?? [],
          auth_driver: 'oidc',
        })
      ).id;
    } catch (e) {
      // A first sign-in of the same person in another tab won the race: use its account.
      const raced = await this.links.linkedUser(t, issuer, who.sub);
      if (raced) return raced;
      if (isAppError(e)) throw new OidcError('oidc_account', `cannot create the account: ${e.code}`);
      throw e;
    }
    await this.links.link(t, issuer, who.sub, created, nowIso());
    return (await this.d.repo.byId(t, created))!;
  }

  /** The provider's username when it is valid and free; undefined lets the account service derive one from the e-mail. */
  private async freeUsername(t: TenantScope, name: string | null): Promise<string | undefined> {
    if (!name) return undefined;
    try {
      return await this.d.users.checkUsername(t, name);
    } catch {
      return undefined;
    }
  }

  private async sync(user: UserRow, who: Identity, s: OidcSettings): Promise<void> {
    const managed = user.auth_driver === 'oidc';
    const patch: UpdateUser = {};
    if (managed && who.email && who.email.toLowerCase() !== user.email.toLowerCase() && !(await this.d.repo.exists(user, 'email', who.email, user.id)))
      patch.email = who.email;
    if (who.groups) {
      const current = (await this.d.repo.view(user, user.id))?.groups ?? [];
      const want = managed ? who.groups : [...new Set([...current, ...who.groups])];
      if (want.length !== current.length || want.some((g) => !current.includes(g))) patch.groups = want;
      if (s.admin_group !== '') {
        const member = who.groups.includes(s.admin_group);
        if (member && user.role !== 'admin') patch.role = 'admin';
        else if (!member && managed && user.role === 'admin') patch.role = 'user';
      }
    }
    if (Object.keys(patch).length === 0) return;
    try {
      await this.d.users.update(user, user.id, patch);
    } catch (e) {
      // The last enabled admin keeps the role (as everywhere); an e-mail the account rules refuse stays as it was.
      if (!isAppError(e)) throw e;
      this.d.warn(`OIDC sign-in of account ${user.id}: ${e.code} while updating ${Object.keys(patch).join(', ')}; kept the account as it was for those`);
      const { role: _r, email: _e, ...rest } = patch;
      if (Object.keys(rest).length) await this.d.users.update(user, user.id, rest);
      return;
    }
    if (patch.role)
      await this.d.bus.emit(user, 'audit', {
        action: 'user.update',
        actor: null,
        resource: `user:${user.id}`,
        meta: { via: 'oidc', role: { from: user.role, to: patch.role } },
      });
  }
}
