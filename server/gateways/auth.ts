/**
 * Signing in to a gateway, the same way for WebDAV, SFTP and FTP: a user name
 * and a password, where the password may be an API key token (`fdk_…`, the
 * user name is then ignored) or the account's password (same throttle, audit
 * and disabled-account rules as the web sign-in; an account with a second
 * factor must use a key). S3 signs requests with the key's S3 credentials
 * instead (see `s3Key`).
 *
 * WebDAV sends the password with every request: a right password is
 * remembered for CACHE_MS by a hash of the pair, so the password hash runs
 * once per client, not per request. A remembered pair is dropped when the
 * account's password changes (the stored hash is compared) and the account is
 * re-read on each use (disabled, demoted, locked by the throttle, a second
 * factor enrolled: at once).
 *
 * Multi-tenant mode (docs/tenants.md, "Selecting a tenant"): the name `alice@slug` signs in to tenant `slug`
 * as `alice`; a plain name to the tenant the request came for (WebDAV's host or `/t/<slug>/` prefix), else
 * tenant 1. An unknown or suspended tenant is refused like a wrong password. A key token says its tenant
 * itself (the key row's); a suspended tenant's keys are found in none.
 */
import { createHash } from 'node:crypto';
import { isKeyToken, keyActor, personActor, type Actor, type Auth, type KeyScope, type Principal, type TenantDirectory } from '../auth';
import { AppError } from '../errors';
import type { RequestMeta } from '../events';
import type { GatewayOrigin as Protocol } from '../catalogue';
import { DEFAULT_TENANT, type TenantScope } from '../db';

export type { GatewayOrigin as Protocol } from '../catalogue';

/** How long a right account password is remembered. */
const CACHE_MS = 5 * 60_000;
const CACHE_MAX = 1000;
/** A tenant's slug: a DNS label, so never an e-mail's domain (which has a dot). */
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export class GatewayAuth {
  private remembered = new Map<string, { userId: number; hash: string | null; at: number }>();

  /** `tenants`: the directory in multi-tenant mode, null in single-tenant mode (everyone is tenant 1's). */
  constructor(
    private auth: Auth,
    private tenants: TenantDirectory | null,
  ) {}

  /**
   * The tenant a sign-in name selects and the name within it. `alice@slug`: tenant `slug`, name `alice` (an
   * e-mail signs in as `bob@example.net@slug`); a suffix that is no tenant's slug is part of the name (so it is
   * as unknown as any wrong name); no suffix: `base`, the tenant the request came for. Scope null: the tenant
   * is suspended or gone.
   */
  select(login: string, base: TenantScope = DEFAULT_TENANT): { scope: TenantScope | null; name: string } {
    if (!this.tenants) return { scope: DEFAULT_TENANT, name: login };
    const at = login.lastIndexOf('@');
    const suffix = at > 0 ? login.slice(at + 1) : '';
    const named = SLUG.test(suffix) ? this.tenants.bySlug(suffix) : undefined;
    const entry = named ?? this.tenants.byId(base.tenant_id);
    return { scope: entry && !entry.suspended ? entry.scope : null, name: named ? login.slice(0, at) : login };
  }

  /** Whether work of tenant `s` may go on (not suspended nor deleted): checked by every gateway verb. */
  live(s: TenantScope): boolean {
    if (!this.tenants) return true;
    const e = this.tenants.byId(s.tenant_id);
    return !!e && !e.suspended;
  }

  /** Where a key token may be of: every active tenant. */
  private keyTenants(): readonly TenantScope[] {
    return this.tenants ? this.tenants.active() : [DEFAULT_TENANT];
  }

  /**
   * The actor of a sign-in. Refusals: `unauthenticated` (a bad, revoked or
   * expired key), `invalid_credentials` (with `tries_left`), `rate_limited`,
   * `account_disabled`, `forbidden` with `reason: use_api_key` (an account
   * with a second factor). `base`: the tenant the request came for where the protocol carries one (WebDAV's
   * host or prefix), else tenant 1.
   */
  async signIn(login: string, password: string, req: RequestMeta & { ip: string }, protocol: Protocol, base: TenantScope = DEFAULT_TENANT): Promise<Actor> {
    const request = { ...req, ua: req.ua ?? protocol };
    if (isKeyToken(password)) {
      const k = await this.auth.keys.resolve(password, request, this.keyTenants());
      if (!k) throw new AppError('unauthenticated');
      return keyActor(k.principal, k.scope, request);
    }
    const { scope, name } = this.select(login, base);
    const id = createHash('sha256')
      .update(`${scope?.tenant_id ?? 0}\0${login}\0${password}`)
      .digest('base64url');
    const hit = scope && this.remembered.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) {
      // A lock the web sign-in would honour holds here too, remembered or not.
      await this.auth.auth.gatewayRecheck(scope, name, req.ip, hit.userId);
      const row = await this.auth.repo.byId(scope, hit.userId);
      const p = row && row.password_hash === hit.hash ? await this.auth.repo.principal(row, row.id, `${protocol}:${row.id}`) : null;
      if (p) return personActor(p, request);
      this.remembered.delete(id);
    }
    const p: Principal = await this.auth.auth.gatewayLogin(scope, name, password, request, protocol);
    this.remembered.delete(id);
    this.remembered.set(id, { userId: p.id, hash: (await this.auth.repo.byId(p, p.id))?.password_hash ?? null, at: Date.now() });
    for (const k of this.remembered.keys()) {
      if (this.remembered.size <= CACHE_MAX) break;
      this.remembered.delete(k);
    }
    return personActor(p, request);
  }

  /**
   * The key an S3 request names by its access key id, with the secret its
   * signature must be made with; null for an unknown, revoked or expired key.
   * Call `used()` once the signature is verified: it records the key's use.
   */
  async s3Key(accessKeyId: string, req: RequestMeta & { ip: string }): Promise<{ actor: Actor; secret: string; scope: KeyScope; used: () => void } | null> {
    const request = { ...req, ua: req.ua ?? 's3' };
    const k = await this.auth.keys.byAccessKey(accessKeyId, request, this.keyTenants());
    return k && { actor: keyActor(k.principal, k.scope, request), secret: k.secret, scope: k.scope, used: k.used };
  }
}
