/**
 * The second step of a password sign-in. After the right password for an
 * account with a second factor, `begin` answers a challenge (5 minutes,
 * single use, bound to the account) instead of a session; `finish` checks one
 * answer to it (an authenticator code, a recovery code, or a passkey
 * assertion). Wrong answers count in the login throttle, for the login as
 * typed, the address and the person, and lock the same way wrong passwords
 * do; only a finished sign-in forgets the failures.
 */
import { AppError } from '../../errors';
import type { TenantScope } from '../../db';
import { decrypt, safeEqual, sha256Hex } from '../../lib/crypto';
import type { MfaChallenge, MfaMethod } from '../../contract';
import type { UserRow } from '../users.repo';
import type { MfaDeps, MfaEnrolment } from './enrolment';
import { hashRecoveryCode } from './recovery';
import { matchTotp } from './totp';
import { authenticationOptions, verifyAuthentication, type AuthenticationResponseJSON, type RelyingParty } from './webauthn';

/** One answer to a login challenge; exactly one field is set (the route checks it). */
export interface SecondStepAnswer {
  totp?: string;
  recovery_code?: string;
  passkey?: AuthenticationResponseJSON;
}

export class SecondStep {
  constructor(
    private d: MfaDeps,
    private enrolment: MfaEnrolment,
  ) {}

  /**
   * The challenge for `user` when they have a second factor, else null (the
   * caller signs them in at once). `login` is the name they typed (the
   * throttle's account key); `rp` is where the browser is, for passkeys made
   * there (none are offered without it).
   */
  /** Whether `userId` has a second factor (a password alone does not sign them in). */
  enrolled(s: TenantScope, userId: number): Promise<boolean> {
    return this.enrolment.enrolled(s, userId);
  }

  async begin(user: UserRow, login: string, rp: RelyingParty | null): Promise<MfaChallenge | null> {
    // The account's row is the scope: the challenge is stored in its tenant.
    if (!(await this.enrolment.enrolled(user, user.id))) return null;
    const methods: MfaMethod[] = [];
    if ((await this.d.repo.totp(user, user.id))?.secret) methods.push('totp');
    if ((await this.d.repo.unusedCodes(user, user.id)).length > 0) methods.push('recovery');
    const passkeys = rp ? await this.d.repo.passkeys(user, user.id, rp.id) : [];
    const options = rp && passkeys.length > 0 ? await authenticationOptions(rp, passkeys) : null;
    if (options) methods.push('passkey');
    const { token, expires_at } = await this.enrolment.newChallenge(user, user.id, 'login', login, options?.challenge ?? null, rp?.id ?? null);
    return {
      mfa_required: true,
      challenge: token,
      methods,
      expires_at,
      ...(options ? { passkey_options: options as unknown as Record<string, unknown> } : {}),
    };
  }

  /**
   * Checks `answer` against the challenge `token`; returns the account and the
   * method used. `mfa_expired` (401) for an unknown, used or expired
   * challenge; 429 `rate_limited` while the account or address is locked
   * (checked before the answer); `mfa_invalid` (401, `tries_left`) for a wrong
   * answer, which is audited `auth.mfa_failed`; `account_disabled` when the
   * account was disabled in between. `s`: the tenant the request is in (a challenge of another is unknown).
   */
  async finish(
    s: TenantScope,
    token: string,
    answer: SecondStepAnswer,
    rp: RelyingParty | null,
    request: { ip: string; ua?: string | null },
  ): Promise<{ user: UserRow; method: MfaMethod }> {
    const id = sha256Hex(token);
    const c = await this.d.repo.challenge(s, id, new Date(this.d.clock()).toISOString());
    if (!c || c.purpose !== 'login') throw new AppError('mfa_expired');
    await this.d.throttle.check(c, request.ip, c.user_id);
    const method: MfaMethod = answer.passkey ? 'passkey' : answer.recovery_code !== undefined ? 'recovery' : 'totp';
    const ok =
      method === 'totp'
        ? await this.totpOk(c, c.user_id, answer.totp ?? '')
        : method === 'recovery'
          ? await this.recoveryOk(c, c.user_id, answer.recovery_code ?? '')
          : await this.passkeyOk(c, c.user_id, c.webauthn_challenge, c.rp_id, rp, answer.passkey!);
    const user = await this.d.users.byId(c, c.user_id);
    if (!ok || !user) {
      const left = await this.d.throttle.fail(c, request.ip, c.user_id);
      await this.d.bus.emit(c, 'audit', {
        action: 'auth.mfa_failed',
        actor: user ? { id: user.id, email: user.email } : null,
        request,
        meta: { method, tries_left: left },
      });
      if (left === 0) await this.d.throttle.check(c, request.ip, c.user_id);
      throw new AppError('mfa_invalid', { tries_left: left }, { tries_left: left });
    }
    if (!(await this.d.repo.consumeChallenge(c, id))) throw new AppError('mfa_expired');
    if (user.disabled) throw new AppError('account_disabled');
    await this.d.throttle.succeed(c, c.user_id);
    return { user, method };
  }

  /** Right for the active secret and newer than the last accepted step (which it then becomes). */
  private async totpOk(s: TenantScope, userId: number, code: string): Promise<boolean> {
    const row = await this.d.repo.totp(s, userId);
    if (!row?.secret) return false;
    const step = matchTotp(decrypt(this.d.secretKey, row.secret), code, this.d.clock(), row.last_step);
    return step !== null && (await this.d.repo.acceptStep(s, userId, step));
  }

  /** One of the person's unused codes, compared in constant time against each, then spent. */
  private async recoveryOk(s: TenantScope, userId: number, code: string): Promise<boolean> {
    const want = hashRecoveryCode(this.d.secretKey, userId, code);
    let hit: number | null = null;
    for (const c of await this.d.repo.unusedCodes(s, userId)) if (safeEqual(c.code_hash, want)) hit = c.id;
    return hit !== null && (await this.d.repo.useCode(s, hit, new Date(this.d.clock()).toISOString()));
  }

  /** An assertion by one of the person's passkeys for this address, over this challenge; its counter is stored. */
  private async passkeyOk(
    s: TenantScope,
    userId: number,
    expected: string | null,
    challengeRp: string | null,
    rp: RelyingParty | null,
    response: AuthenticationResponseJSON,
  ): Promise<boolean> {
    if (!expected || !rp || challengeRp !== rp.id || typeof response?.id !== 'string') return false;
    const pk = await this.d.repo.passkeyByCredential(s, response.id);
    if (!pk || pk.user_id !== userId || pk.rp_id !== rp.id) return false;
    const counter = await verifyAuthentication(rp, expected, pk, response);
    if (counter === false) return false;
    await this.d.repo.touchPasskey(s, pk.id, counter, new Date(this.d.clock()).toISOString());
    return true;
  }
}
