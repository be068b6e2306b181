/**
 * Sign-in flows: password login (throttled before the KDF) with its second
 * step for accounts that have a second factor, logout, the one-time first-run
 * setup, and desktop pairing (bootstrap secret, device keys bound to a
 * machine id). See docs/auth.md and docs/server-host-protocol.md.
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import type { EventBus, RequestMeta } from '../events';
import { safeEqual, sha256Hex } from '../lib/crypto';
import type { Db } from '../db';
import { nowIso } from '../db';
import { verifyPassword } from './passwords';
import type { LoginThrottle } from './throttle';
import type { Sessions } from './sessions';
import type { UsersRepo, UserRow } from './users.repo';
import type { UsersService } from './users.service';
import type { Principal } from './types';
import type { MfaChallenge } from '../contract';
import type { RelyingParty, SecondStep, SecondStepAnswer } from './mfa';

/** Meta key holding the hash of the desktop bootstrap secret once it was used. */
const BOOTSTRAP_USED = 'desktop_bootstrap_used';

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
    private opts: { desktopBootstrap: string },
    private mfa: SecondStep,
  ) {}

  /**
   * Email (or username) + password. Throws `rate_limited` (429, before any KDF),
   * `invalid_credentials` with `tries_left` (401), `account_disabled` (403).
   * An account with a second factor gets a challenge instead of a session
   * (finished by `loginSecondStep`); whether it has one shows only after the
   * right password. `rp` is where the browser is, for passkeys.
   */
  async login(login: string, password: string, req: RequestMeta & { ip: string }, rp: RelyingParty | null = null): Promise<LoginResult | MfaChallenge> {
    this.throttle.check(login, req.ip);
    const u = this.repo.byLogin(login);
    // Second-step failures lock the person whatever name they typed.
    if (u) this.throttle.check(login, req.ip, u.id);
    // An account the identity provider manages signs in there only, even if a password was set on it since.
    const ok = await this.throttle.gate(() => verifyPassword(password, u?.auth_driver === 'oidc' ? null : (u?.password_hash ?? null)));
    if (!u || !ok) {
      const left = this.throttle.fail(login, req.ip);
      await this.bus.emit('audit', { action: 'auth.failed', actor: u ? { id: u.id, email: u.email } : null, request: req, meta: { login: login.slice(0, 200), tries_left: left } });
      if (left === 0) this.throttle.check(login, req.ip);
      throw new AppError('invalid_credentials', { tries_left: left }, { tries_left: left });
    }
    if (u.disabled) throw new AppError('account_disabled');
    // The failures stay counted until the second step passes too: a known password must not reset them.
    const challenge = await this.mfa.begin(u, login, rp);
    if (challenge) return challenge;
    this.throttle.succeed(login);
    return this.issue(u, req, 'login');
  }

  /** Finishes a sign-in with an answer to the login's challenge (see `SecondStep.finish` for the refusals). */
  async loginSecondStep(challenge: string, answer: SecondStepAnswer, req: RequestMeta & { ip: string }, rp: RelyingParty | null): Promise<LoginResult> {
    const { user, method } = await this.mfa.finish(challenge, answer, rp, req);
    return this.issue(user, req, 'login', { mfa: method });
  }

  async logout(p: Principal, req: RequestMeta): Promise<void> {
    this.sessions.revoke(p.sessionId);
    await this.bus.emit('audit', { action: 'auth.logout', actor: { id: p.id, email: p.email }, request: req });
  }

  /** True while no user exists (the setup page is offered). */
  setupNeeded(): boolean {
    return this.repo.count() === 0;
  }

  /** Creates the first admin; only while no user exists and only for loopback callers. */
  async setup(input: { email: string; username?: string; password: string }, req: RequestMeta & { ip: string; loopback: boolean }): Promise<LoginResult> {
    if (!req.loopback) throw new AppError('setup_local_only');
    if (!this.setupNeeded()) throw new AppError('setup_done');
    await this.users.create({ email: input.email, username: input.username, password: input.password, role: 'admin' });
    const u = this.repo.byLogin(input.email)!;
    return this.issue(u, req, 'login');
  }

  /** Desktop first run: exchanges the shell's one-time secret for an owner session. */
  async desktopBootstrap(secret: string, req: RequestMeta & { loopback: boolean }): Promise<LoginResult> {
    if (!req.loopback) throw new AppError('forbidden');
    const want = this.opts.desktopBootstrap;
    const used = this.db.meta.get(BOOTSTRAP_USED);
    if (!want || typeof secret !== 'string' || !safeEqual(sha256Hex(secret), sha256Hex(want)) || used === sha256Hex(want))
      throw new AppError('unauthenticated');
    const owner = this.repo.list({ role: 'admin', limit: 1 })[0];
    if (!owner) throw new AppError('not_found');
    this.db.meta.set(BOOTSTRAP_USED, sha256Hex(want));
    return this.issue(owner, req, 'desktop');
  }

  /** Mints a device key bound to `machineId`; only its hash is kept. */
  desktopComplete(p: Principal, machineId: string, label: string): { key_id: number; key: string } {
    const key = 'fdk_' + randomBytes(32).toString('base64url');
    const id = Number(
      this.db.sqlite
        .prepare('INSERT INTO device_keys (user_id, machine_id, label, key_hash, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(p.id, machineId, label.slice(0, 100), sha256Hex(`${machineId}\n${key}`), nowIso()).lastInsertRowid,
    );
    return { key_id: id, key };
  }

  /** Signs a paired desktop in: key and machine id must match a live key. */
  async desktopLogin(key: string, machineId: string, req: RequestMeta & { loopback: boolean }): Promise<LoginResult> {
    if (!req.loopback) throw new AppError('forbidden');
    const row = this.db.sqlite
      .prepare('SELECT id, user_id FROM device_keys WHERE key_hash = ? AND revoked_at IS NULL')
      .get(sha256Hex(`${machineId}\n${key}`)) as { id: number; user_id: number } | undefined;
    const u = row ? this.repo.byId(row.user_id) : undefined;
    if (!row || !u || u.disabled) throw new AppError('unauthenticated');
    this.db.sqlite.prepare('UPDATE device_keys SET last_used_at = ? WHERE id = ?').run(nowIso(), row.id);
    return this.issue(u, req, 'desktop');
  }

  listDeviceKeys(p: Principal): Array<{ id: number; machine_id: string; label: string; created_at: string; last_used_at: string | null; revoked_at: string | null }> {
    const sql = 'SELECT id, machine_id, label, created_at, last_used_at, revoked_at FROM device_keys' + (p.role === 'admin' ? '' : ' WHERE user_id = ?') + ' ORDER BY id';
    return (p.role === 'admin' ? this.db.sqlite.prepare(sql).all() : this.db.sqlite.prepare(sql).all(p.id)) as never;
  }

  revokeDeviceKey(p: Principal, id: number): void {
    const row = this.db.sqlite.prepare('SELECT user_id FROM device_keys WHERE id = ?').get(id) as { user_id: number } | undefined;
    if (!row || (row.user_id !== p.id && p.role !== 'admin')) throw new AppError('not_found');
    this.db.sqlite.prepare('UPDATE device_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(nowIso(), id);
  }

  /**
   * Signs `u` in: a session row and its token, audited as `auth.login` with
   * `meta.kind` (`login`, `desktop`, `oidc`) and the caller's `meta` (the
   * second factor used). The caller has checked the credentials and that the
   * account is enabled.
   */
  async issue(u: UserRow, req: RequestMeta, kind: string, meta: Record<string, unknown> = {}): Promise<LoginResult> {
    // Session and audit row in one transaction that waits off the event loop for a database held elsewhere.
    const row = await this.db.waits.write(() => {
      const created = this.sessions.insert(u.id, { ...req, kind });
      this.bus.record('audit', { action: 'auth.login', actor: { id: u.id, email: u.email }, request: req, meta: { kind, ...meta } });
      return created;
    });
    await this.bus.flush();
    const s = await this.sessions.sign(row);
    // The spec's login shape names only admin and user; a viewer signs in as a user-level account.
    return { user: { id: u.id, email: u.email, username: u.username, role: u.role === 'admin' ? 'admin' : 'user' }, token: s.token, expires_at: s.expires_at };
  }
}
