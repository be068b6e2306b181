/**
 * Enrolling and removing second factors, for the signed-in person (each
 * change starts with the current password re-entered) and for an admin
 * (reset). A two-step change (TOTP setup → confirm, passkey options →
 * register) checks the password at its first step; the second step can only
 * finish what that first step started, for the same person, within minutes.
 * Recovery codes belong to the enrolment as a whole: a fresh set is issued
 * when TOTP is confirmed and when the first passkey is added without codes,
 * and they go when the last factor goes.
 */
import { randomBytes } from 'node:crypto';
import { AppError, validation } from '../../errors';
import type { TenantScope } from '../../db';
import type { ActorRef, EventBus, RequestMeta } from '../../events';
import { decrypt, encrypt, sha256Hex } from '../../lib/crypto';
import type { MfaStatus, PasskeyView, TotpSetup } from '../../contract';
import { verifyPassword } from '../passwords';
import type { LoginThrottle } from '../throttle';
import type { UsersRepo } from '../users.repo';
import type { MfaRepo, PasskeyRow } from './mfa.repo';
import { hashRecoveryCode, newRecoveryCodes } from './recovery';
import { matchTotp, newTotpSecret, totpUri } from './totp';
import { registrationOptions, verifyRegistration, type RegistrationResponseJSON, type RelyingParty } from './webauthn';
import { lazy } from '../../lib/lazy';

/** QR images are drawn only while someone enrols an authenticator app. */
const qrcode = lazy(() => import('qrcode'));

/** How long a TOTP setup may wait for its confirming code. */
export const PENDING_TOTP_MS = 15 * 60_000;
/** How long a passkey registration (or a login second step) may take. */
export const CHALLENGE_MS = 5 * 60_000;
const ISSUER = 'Filedock';

export interface MfaDeps {
  repo: MfaRepo;
  users: UsersRepo;
  bus: EventBus;
  throttle: LoginThrottle;
  secretKey: Buffer;
  /** Milliseconds since the epoch; tests pass a fake clock. */
  clock: () => number;
}

/** The person a call acts for (in their tenant, the scope of every statement), with where the request came from. */
export interface Who extends TenantScope {
  id: number;
  email: string;
  username: string;
  request: RequestMeta & { ip: string };
}

const ref = (w: Who): ActorRef => ({ id: w.id, email: w.email });

export class MfaEnrolment {
  constructor(private d: MfaDeps) {}

  private now = () => new Date(this.d.clock()).toISOString();

  /** What the person has enrolled; `rpId` marks which passkeys work at the address in use. */
  async status(s: TenantScope, userId: number, rpId: string): Promise<MfaStatus> {
    const [totp, codes, rows] = await Promise.all([this.d.repo.totp(s, userId), this.d.repo.unusedCodes(s, userId), this.d.repo.passkeys(s, userId)]);
    const passkeys = rows.map(passkeyView);
    const pending = !!totp?.pending_secret && Date.parse(totp.pending_at ?? '') + PENDING_TOTP_MS > this.d.clock();
    return {
      enabled: !!totp?.secret || passkeys.length > 0,
      totp: { enabled: !!totp?.secret, pending, confirmed_at: totp?.confirmed_at ?? null },
      recovery_codes: { remaining: codes.length, created_at: codes[0]?.created_at ?? null },
      passkeys,
      rp_id: rpId,
    };
  }

  /**
   * Checks the re-entered password, counted in the login throttle for the
   * person and the address: `validation_failed` on `current_password` when it
   * is missing (not counted) or wrong, 429 `rate_limited` once the tries are
   * used up. Accounts without
   * a local password cannot confirm one and so cannot change second factors.
   */
  async reauth(who: Who, password: string): Promise<void> {
    const t = this.d.throttle;
    await t.check(null, who.request.ip, who.id);
    // A missing password is a form not filled in, not a guess: refused without spending a try.
    if (!password)
      throw new AppError('validation_failed', { field: 'current_password', reason: 'required' }, { field: 'current_password', reason: 'required' });
    const hash = (await this.d.users.byId(who, who.id))?.password_hash ?? null;
    if (await t.gate(() => verifyPassword(password, hash))) return;
    const left = await t.fail(null, who.request.ip, who.id);
    await this.d.bus.emit(who, 'audit', { action: 'auth.failed', actor: ref(who), request: who.request, meta: { step: 'reauth', tries_left: left } });
    if (left === 0) await t.check(null, who.request.ip, who.id);
    throw new AppError('validation_failed', { field: 'current_password', tries_left: left }, { field: 'current_password', tries_left: left });
  }

  /** Starts (or restarts) a TOTP enrolment: a new pending secret, its URI and QR image. An active TOTP stays in force until confirmation. */
  async totpSetup(who: Who): Promise<TotpSetup> {
    const secret = newTotpSecret();
    await this.d.repo.setPending(who, who.id, encrypt(this.d.secretKey, secret), this.now());
    const uri = totpUri(secret, ISSUER, who.email);
    const qr = await (await qrcode()).default.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 240 });
    return { secret, uri, qr, expires_at: new Date(this.d.clock() + PENDING_TOTP_MS).toISOString() };
  }

  /**
   * Activates the pending secret when `code` is right for it; answers a new
   * set of recovery codes (shown once). `conflict` when no setup is pending
   * (or it expired); `validation_failed` on `code` when the code is wrong.
   */
  async totpConfirm(who: Who, code: string): Promise<{ recovery_codes: string[] }> {
    const row = await this.d.repo.totp(who, who.id);
    if (!row?.pending_secret || Date.parse(row.pending_at ?? '') + PENDING_TOTP_MS <= this.d.clock())
      throw new AppError('conflict', { reason: 'no_pending_setup' }, { reason: 'no_pending_setup' });
    const step = matchTotp(decrypt(this.d.secretKey, row.pending_secret), code, this.d.clock(), 0);
    if (step === null) throw validation('code', 'wrong code');
    // Only the secret the code was checked against: a setup restarted meanwhile, or a second confirm, loses.
    if (!(await this.d.repo.activate(who, who.id, row.pending_secret, step, this.now())))
      throw new AppError('conflict', { reason: 'no_pending_setup' }, { reason: 'no_pending_setup' });
    const recovery_codes = await this.issueCodes(who, who.id);
    await this.audit('auth.mfa_enrolled', who, { method: 'totp', replaced: !!row.secret });
    return { recovery_codes };
  }

  /** Removes the person's TOTP; `not_found` when none is active. Recovery codes go when no factor is left. */
  async totpRemove(who: Who): Promise<void> {
    if (!(await this.d.repo.removeTotp(who, who.id))) throw new AppError('not_found');
    await this.d.repo.removeCodesIfBare(who, who.id);
    await this.audit('auth.mfa_removed', who, { method: 'totp' });
  }

  /** A new set of ten codes replacing every earlier one; `conflict` when no second factor is enrolled. */
  async regenerateCodes(who: Who): Promise<{ recovery_codes: string[] }> {
    if (!(await this.enrolled(who, who.id))) throw new AppError('conflict', { reason: 'no_second_factor' }, { reason: 'no_second_factor' });
    const recovery_codes = await this.issueCodes(who, who.id);
    await this.audit('auth.mfa_enrolled', who, { method: 'recovery' });
    return { recovery_codes };
  }

  /** Starts a passkey registration at `rp`: the browser's options and the challenge token `passkeyRegister` takes back. */
  async passkeyOptions(who: Who, rp: RelyingParty): Promise<{ challenge: string; options: Record<string, unknown> }> {
    const options = await registrationOptions(rp, who, await this.d.repo.passkeys(who, who.id));
    await this.d.repo.removeChallenges(who, who.id, 'register');
    const { token } = await this.newChallenge(who, who.id, 'register', '', options.challenge, rp.id);
    return { challenge: token, options: options as unknown as Record<string, unknown> };
  }

  /**
   * Stores the passkey the browser made for the challenge `passkeyOptions`
   * gave this person. `validation_failed` on `challenge` (unknown, expired,
   * another person's or another address's) or `response` (does not verify);
   * `conflict` for a credential already stored. Answers recovery codes when
   * this made the first codes of the enrolment.
   */
  async passkeyRegister(
    who: Who,
    rp: RelyingParty,
    token: string,
    name: string,
    response: RegistrationResponseJSON,
  ): Promise<{ passkey: PasskeyView; recovery_codes?: string[] }> {
    const id = sha256Hex(token);
    const c = await this.d.repo.challenge(who, id, this.now());
    if (!c || c.user_id !== who.id || c.purpose !== 'register' || c.rp_id !== rp.id || !c.webauthn_challenge)
      throw validation('challenge', 'unknown or expired');
    const cred = await verifyRegistration(rp, c.webauthn_challenge, response);
    if (!(await this.d.repo.consumeChallenge(who, id))) throw validation('challenge', 'already used');
    const codes = newRecoveryCodes();
    const added = await this.d.repo.addPasskey(
      who,
      { user_id: who.id, ...cred, transports: JSON.stringify(cred.transports), rp_id: rp.id, name, created_at: this.now() },
      codes.map((c) => hashRecoveryCode(this.d.secretKey, who.id, c)),
      this.now(),
    );
    if (!added) throw new AppError('conflict', { reason: 'passkey_exists' }, { reason: 'passkey_exists' });
    await this.audit('auth.mfa_enrolled', who, { method: 'passkey', name, rp_id: rp.id });
    const passkey = passkeyView(added.passkey);
    return added.codes ? { passkey, recovery_codes: codes } : { passkey };
  }

  /** Removes one of the person's passkeys; `not_found` when it is not theirs. */
  async passkeyRemove(who: Who, id: number): Promise<void> {
    const row = await this.d.repo.removePasskey(who, who.id, id);
    if (!row) throw new AppError('not_found');
    await this.d.repo.removeCodesIfBare(who, who.id);
    await this.audit('auth.mfa_removed', who, { method: 'passkey', name: row.name });
  }

  /**
   * An admin removes every second factor of a person (TOTP, passkeys, codes,
   * open challenges); audited `user.mfa_reset`, and the person is told in the
   * bell. `not_found` for an unknown person (or another tenant's). Idempotent.
   */
  async reset(
    s: TenantScope,
    userId: number,
    by: { actor: ActorRef | null; request?: RequestMeta },
  ): Promise<{ totp: boolean; passkeys: number; recovery_codes: number }> {
    const u = await this.d.users.byId(s, userId);
    if (!u) throw new AppError('not_found');
    const removed = await this.d.repo.reset(s, userId);
    await this.d.bus.emit(s, 'audit', {
      action: 'user.mfa_reset',
      actor: by.actor,
      request: by.request,
      resource: `user:${userId}`,
      meta: { email: u.email, ...removed },
    });
    await this.d.bus.emit(s, 'user.mfa_reset', { user_id: userId, by: by.actor?.email ?? null });
    return removed;
  }

  /** Who of the tenant has a second factor, for the admin's user list. */
  enrolledUsers(s: TenantScope): Promise<Array<{ user_id: number; methods: Array<'totp' | 'passkey'> }>> {
    return this.d.repo.enrolledUsers(s);
  }

  /** True when the person has an active TOTP or a passkey. */
  enrolled(s: TenantScope, userId: number): Promise<boolean> {
    return this.d.repo.enrolled(s, userId);
  }

  /**
   * Stores a challenge (5 minutes) under the hash of a fresh token; returns
   * the token and its expiry. Expired challenges are swept here, so the table
   * holds only what is still open.
   */
  async newChallenge(
    s: TenantScope,
    userId: number,
    purpose: 'login' | 'register',
    login: string,
    webauthn: string | null,
    rpId: string | null,
  ): Promise<{ token: string; expires_at: string }> {
    const token = randomBytes(32).toString('base64url');
    const at = this.d.clock();
    const created_at = new Date(at).toISOString();
    const expires_at = new Date(at + CHALLENGE_MS).toISOString();
    await this.d.repo.insertChallenge(
      s,
      { id: sha256Hex(token), user_id: userId, purpose, login, webauthn_challenge: webauthn, rp_id: rpId, created_at, expires_at },
      created_at,
    );
    return { token, expires_at };
  }

  private async issueCodes(s: TenantScope, userId: number): Promise<string[]> {
    const codes = newRecoveryCodes();
    await this.d.repo.replaceCodes(
      s,
      userId,
      codes.map((c) => hashRecoveryCode(this.d.secretKey, userId, c)),
      this.now(),
    );
    return codes;
  }

  private audit(action: 'auth.mfa_enrolled' | 'auth.mfa_removed', who: Who, meta: Record<string, unknown>): Promise<void> {
    return this.d.bus.emit(who, 'audit', { action, actor: ref(who), request: who.request, resource: `user:${who.id}`, meta });
  }
}

function passkeyView(p: PasskeyRow): PasskeyView {
  return { id: p.id, name: p.name, rp_id: p.rp_id, created_at: p.created_at, last_used_at: p.last_used_at };
}
