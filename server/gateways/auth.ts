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
 */
import { createHash } from 'node:crypto';
import { isKeyToken, keyActor, personActor, type Actor, type Auth, type KeyScope, type Principal } from '../auth';
import { AppError } from '../errors';
import type { RequestMeta } from '../events';
import type { GatewayOrigin as Protocol } from '../catalogue';
import { DEFAULT_TENANT } from '../db';

export type { GatewayOrigin as Protocol } from '../catalogue';

/** How long a right account password is remembered. */
const CACHE_MS = 5 * 60_000;
const CACHE_MAX = 1000;

export class GatewayAuth {
  private remembered = new Map<string, { userId: number; hash: string | null; at: number }>();

  constructor(private auth: Auth) {}

  /**
   * The actor of a sign-in. Refusals: `unauthenticated` (a bad, revoked or
   * expired key), `invalid_credentials` (with `tries_left`), `rate_limited`,
   * `account_disabled`, `forbidden` with `reason: use_api_key` (an account
   * with a second factor).
   */
  async signIn(login: string, password: string, req: RequestMeta & { ip: string }, protocol: Protocol): Promise<Actor> {
    const request = { ...req, ua: req.ua ?? protocol };
    if (isKeyToken(password)) {
      const k = await this.auth.keys.resolve(password, request);
      if (!k) throw new AppError('unauthenticated');
      return keyActor(k.principal, k.scope, request);
    }
    const id = createHash('sha256').update(`${login}\0${password}`).digest('base64url');
    const hit = this.remembered.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) {
      // A lock the web sign-in would honour holds here too, remembered or not.
      // Step 2 of docs/tenants.md: the tenant the sign-in name selects (`name@slug`), remembered with the hit.
      await this.auth.auth.gatewayRecheck(DEFAULT_TENANT, login, req.ip, hit.userId);
      const row = await this.auth.repo.byId(DEFAULT_TENANT, hit.userId);
      const p = row && row.password_hash === hit.hash ? await this.auth.repo.principal(row, row.id, `${protocol}:${row.id}`) : null;
      if (p) return personActor(p, request);
      this.remembered.delete(id);
    }
    const p: Principal = await this.auth.auth.gatewayLogin(login, password, request, protocol);
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
    const k = await this.auth.keys.byAccessKey(accessKeyId, request);
    return k && { actor: keyActor(k.principal, k.scope, request), secret: k.secret, scope: k.scope, used: k.used };
  }
}
