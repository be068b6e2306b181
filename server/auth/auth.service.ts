/**
 * Sign-in flows: password login (throttled before the KDF) with its second
 * step for accounts that have a second factor, logout, the one-time first-run
 * setup, and desktop pairing (bootstrap secret, device keys bound to a
 * machine id). See docs/auth.md and docs/server-host-protocol.md.
 */
import { AppError } from '../errors';
import type { EventBus, RequestMeta } from '../events';
import { safeEqual, sha256Hex } from '../lib/crypto';
import { DEFAULT_TENANT, type Db, type TenantScope } from '../db';
import { hashPassword, needsRehash, verifyPassword } from './passwords';
import type { Keys } from './keys';
import type { LoginThrottle } from './throttle';
import type { Sessions } from './sessions';
import type { UsersRepo, UserRow } from './users.repo';
import type { UsersService } from './users.service';
import type { Principal } from './types';
import type { MfaChallenge } from '../contract';
import type { RelyingParty, SecondStep, SecondStepAnswer } from './mfa';

/** The throttle's tenant for a name typed for no tenant (a gateway's unknown or suspended one): no tenant's id. */
const NO_TENANT = 0;

/** Meta key holding the hash of the desktop bootstrap secret once it was used. */
const BOOTSTRAP_USED = 'desktop_bootstrap_used';

/** A desktop pairing key as `GET /api/auth/desktop/keys` lists it. */
export interface DeviceKeyView {
  id: number;
  machine_id: string;
  label: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface LoginResult {
  user: { id: number; email: string; username: string; role: 'admin' | 'user' };
  token: string;
  expires_at: string;
}

export class AuthService {
  constructor(
    private db: Db,
    private repo: UsersRepo,
    private users: UsersService,
    private sessions: Sessions,
    private throttle: LoginThrottle,
    private bus: EventBus,
    private opts: { desktopBootstrap: string; allowSignup: () => boolean },
    private mfa: SecondStep,
    private keys: Keys,
    private probes: LoginThrottle,
  ) {}

  /**
   * Email (or username) + password. Throws `rate_limited` (429, before any KDF),
   * `invalid_credentials` with `tries_left` (401), `account_disabled` (403).
   * An account with a second factor gets a challenge instead of a session
   * (finished by `loginSecondStep`); whether it has one shows only after the
   * right password. `rp` is where the browser is, for passkeys. The account is looked up in tenant `s`
   * (the request's: the same name in another tenant is another person).
   */
  async login(
    s: TenantScope,
    login: string,
    password: string,
    req: RequestMeta & { ip: string },
    rp: RelyingParty | null = null,
  ): Promise<LoginResult | MfaChallenge> {
    const u = await this.checkPassword(s, login, password, req);
    // The failures stay counted until the second step passes too: a known password must not reset them.
    const challenge = await this.mfa.begin(u, login, rp);
    if (challenge) return challenge;
    await this.throttle.succeed({ tenant_id: s.tenant_id, login });
    return this.issue(u, req, 'login');
  }

  /**
   * A protocol gateway's sign-in (WebDAV, SFTP, FTP): the same password check
   * and throttle as the web sign-in, answering the account instead of a
   * session. An account with a second factor cannot sign in to a gateway with
   * its password (403 `forbidden`, `reason: use_api_key`): machines use API
   * keys. Audited `auth.login` with `meta.kind` = the protocol. `s`: the tenant the sign-in name selected
   * (`name@slug`, docs/tenants.md); null for an unknown or suspended one, refused like a wrong password.
   */
  async gatewayLogin(s: TenantScope | null, login: string, password: string, req: RequestMeta & { ip: string }, protocol: string): Promise<Principal> {
    const u = await this.checkPassword(s, login, password, req);
    if (await this.mfa.enrolled(u, u.id))
      throw new AppError('forbidden', { reason: 'this account has a second factor: use an API key' }, { reason: 'use_api_key' });
    await this.throttle.succeed({ tenant_id: u.tenant_id, login });
    const p = await this.repo.principal(u, u.id, `${protocol}:${u.id}`);
    if (!p) throw new AppError('account_disabled');
    await this.bus.emit(u, 'audit', { action: 'auth.login', actor: { id: u.id, email: u.email }, request: req, meta: { kind: protocol } });
    return p;
  }

  /**
   * What a gateway re-checks before it honours a password it remembered: the
   * throttle's locks (login, address, person) and a second factor enrolled
   * since. Throws as `gatewayLogin` would.
   */
  async gatewayRecheck(s: TenantScope, login: string, ip: string, userId: number): Promise<void> {
    await this.throttle.check({ tenant_id: s.tenant_id, login }, ip, userId);
    if (await this.mfa.enrolled(s, userId))
      throw new AppError('forbidden', { reason: 'this account has a second factor: use an API key' }, { reason: 'use_api_key' });
  }

  /**
   * The account of a right password, throttled before the KDF: `rate_limited`
   * (429), `invalid_credentials` with `tries_left` (401, audited
   * `auth.failed`), `account_disabled` (403, only after a right password). `s` null: no tenant to look in
   * (a gateway's unknown or suspended one), so no account, at the same cost and with the same answer.
   */
  private async checkPassword(s: TenantScope | null, login: string, password: string, req: RequestMeta & { ip: string }): Promise<UserRow> {
    const account = { tenant_id: s?.tenant_id ?? NO_TENANT, login };
    await this.throttle.check(account, req.ip);
    const u = s ? await this.repo.byLogin(s, login) : undefined;
    // Second-step failures lock the person whatever name they typed.
    if (u) await this.throttle.check(account, req.ip, u.id);
    // An account the identity provider manages signs in there only, even if a password was set on it since.
    const ok = await this.throttle.gate(() => verifyPassword(password, u?.auth_driver === 'oidc' ? null : (u?.password_hash ?? null)));
    if (!u || !ok) {
      const left = await this.throttle.fail(account, req.ip);
      // A sign-in to no tenant (a gateway's unknown or suspended one) is the installation's to audit.
      await this.bus.emit(s ?? DEFAULT_TENANT, 'audit', {
        action: 'auth.failed',
        actor: u ? { id: u.id, email: u.email } : null,
        request: req,
        meta: { login: login.slice(0, 200), tries_left: left },
      });
      if (left === 0) await this.throttle.check(account, req.ip);
      throw new AppError('invalid_credentials', { tries_left: left }, { tries_left: left });
    }
    if (u.disabled) throw new AppError('account_disabled');
    // A hash from weaker parameters is replaced now, while the password is at hand (docs/auth.md, "Passwords").
    if (u.password_hash && needsRehash(u.password_hash)) await this.repo.rehash(u, u.id, u.password_hash, await hashPassword(password));
    return u;
  }

  /** Finishes a sign-in with an answer to the login's challenge (see `SecondStep.finish` for the refusals). */
  async loginSecondStep(
    s: TenantScope,
    challenge: string,
    answer: SecondStepAnswer,
    req: RequestMeta & { ip: string },
    rp: RelyingParty | null,
  ): Promise<LoginResult> {
    // The challenge is looked up in the request's tenant, as the password was before it.
    const { user, method } = await this.mfa.finish(s, challenge, answer, rp, req);
    return this.issue(user, req, 'login', { mfa: method });
  }

  async logout(p: Principal, req: RequestMeta): Promise<void> {
    await this.sessions.revoke(p, p.sessionId);
    await this.bus.emit(p, 'audit', { action: 'auth.logout', actor: { id: p.id, email: p.email }, request: req });
  }

  /** True while tenant `s` has no user (the setup page is offered). */
  async setupNeeded(s: TenantScope): Promise<boolean> {
    return (await this.repo.count(s)) === 0;
  }

  /**
   * Creates the first admin of tenant `s` (the request's); only while it has no user and only for
   * loopback callers. Tenant 1's is the installation's platform operator (docs/tenants.md).
   * `prepare` (the first storage's check) runs after those guards and before the account exists.
   */
  async setup(
    s: TenantScope,
    input: { email: string; username?: string; password: string },
    req: RequestMeta & { ip: string; loopback: boolean },
    prepare?: () => Promise<void>,
  ): Promise<LoginResult> {
    if (!req.loopback) throw new AppError('setup_local_only');
    if (!(await this.setupNeeded(s))) throw new AppError('setup_done');
    await prepare?.();
    await this.users.create(s, { email: input.email, username: input.username, password: input.password, role: 'admin' });
    const u = (await this.repo.byLogin(s, input.email))!;
    if (s.tenant_id === DEFAULT_TENANT.tenant_id) await this.repo.makePlatformOperator(u.id);
    return this.issue(u, req, 'login');
  }

  /**
   * Creates a `user` account and signs it in, when `allow_signup` is on
   * (`forbidden` otherwise). Every attempt spends from the address's probe
   * budget (`rate_limited` past it), since an answer such as `email_taken`
   * tells whether an account exists.
   */
  async signup(
    s: TenantScope,
    input: { email: string; username?: string; password: string; language?: string | null },
    req: RequestMeta & { ip: string },
  ): Promise<LoginResult> {
    if (!this.opts.allowSignup()) throw new AppError('forbidden', { reason: 'sign-up is off' }, { reason: 'signup_off' });
    await this.probe(req.ip);
    await this.throttle.gate(() => this.users.create(s, { ...input, role: 'user' }, { actor: null, request: req }));
    return this.issue((await this.repo.byLogin(s, input.email.trim()))!, req, 'signup');
  }

  /**
   * Spends one probe of `ip` (account checks, sign-ups): past the budget
   * (the sign-in failures an address may make) → `rate_limited`.
   */
  async probe(ip: string): Promise<void> {
    await this.probes.check(null, ip);
    await this.probes.fail(null, ip);
  }

  /** Desktop first run: exchanges the shell's one-time secret for an owner session. */
  async desktopBootstrap(secret: string, req: RequestMeta & { loopback: boolean }): Promise<LoginResult> {
    if (!req.loopback) throw new AppError('forbidden');
    const want = this.opts.desktopBootstrap;
    if (!want || typeof secret !== 'string' || !safeEqual(sha256Hex(secret), sha256Hex(want))) throw new AppError('unauthenticated');
    // The desktop shell's installation is single-tenant: its owner is tenant 1's first admin.
    const owner = (await this.repo.list(DEFAULT_TENANT, { role: 'admin', limit: 1 }))[0];
    if (!owner) throw new AppError('not_found');
    // One conditional write checks and marks the secret used: two requests with it cannot both pass.
    if (!(await this.db.meta.claim(BOOTSTRAP_USED, sha256Hex(want)))) throw new AppError('unauthenticated');
    return this.issue(owner, req, 'desktop');
  }

  /** Mints the key a desktop shell pairs with, bound to `machineId` (auth/keys: only its hash is kept). */
  desktopComplete(p: Principal, machineId: string, label: string, req?: RequestMeta): Promise<{ key_id: number; key: string }> {
    return this.keys.createDevice(p, machineId, label.slice(0, 100), req);
  }

  /** Signs a paired desktop in: key and machine id must match a live key of an enabled account. */
  async desktopLogin(key: string, machineId: string, req: RequestMeta & { loopback: boolean }): Promise<LoginResult> {
    if (!req.loopback) throw new AppError('forbidden');
    const owner = await this.keys.desktopOwner(key, machineId);
    const u = owner === null ? undefined : await this.repo.byId(DEFAULT_TENANT, owner);
    if (!u || u.disabled) throw new AppError('unauthenticated');
    return this.issue(u, req, 'desktop');
  }

  /** Desktop pairing keys: the caller's, or everyone's for an admin. */
  async listDeviceKeys(p: Principal): Promise<DeviceKeyView[]> {
    return (await this.keys.list(p, p.role === 'admin' ? null : p.id))
      .filter((k) => k.machine_id !== null)
      .map((k) => ({ id: k.id, machine_id: k.machine_id!, label: k.name, created_at: k.created_at, last_used_at: k.last_used_at, revoked_at: k.revoked_at }))
      .reverse();
  }

  /** Revokes a desktop pairing key of the caller (an admin: anyone's); other ids → `not_found`. */
  async revokeDeviceKey(p: Principal, id: number, req?: RequestMeta): Promise<void> {
    const row = await this.keys.byId(p, id);
    if (!row || row.machine_id === null || (row.user_id !== p.id && p.role !== 'admin')) throw new AppError('not_found');
    await this.keys.revoke(p, id, req);
  }

  /**
   * Signs `u` in: a session row and its token, audited as `auth.login` with
   * `meta.kind` (`login`, `desktop`, `oidc`) and the caller's `meta` (the
   * second factor used). The caller has checked the credentials and that the
   * account is enabled.
   */
  async issue(u: UserRow, req: RequestMeta, kind: string, meta: Record<string, unknown> = {}): Promise<LoginResult> {
    // Session and audit record in one unit of work: both commit or neither.
    const audit = { action: 'auth.login', actor: { id: u.id, email: u.email }, request: req, meta: { kind, ...meta } };
    const row = await this.sessions.insert(u, u.id, { ...req, kind }, (t) => this.bus.recordIn(t, u, 'audit', audit));
    await this.bus.flush();
    const s = await this.sessions.sign(row);
    // The spec's login shape names only admin and user; a viewer signs in as a user-level account.
    return { user: { id: u.id, email: u.email, username: u.username, role: u.role === 'admin' ? 'admin' : 'user' }, token: s.token, expires_at: s.expires_at };
  }
}
