/**
 * A link's PIN gate and its download token (spec: public links). The PIN is kept as an HMAC of the link's
 * token and the PIN; five wrong answers lock the link for 10 minutes (counted in the row, so every instance
 * agrees). A right PIN buys a 30-minute download token that opens this one link only.
 */
import { AppError } from '../errors';
import { hmacHex, safeEqual } from '../lib/crypto';
import type { SharesRepo, ShareRow } from './shares.repo';

export const PIN_MAX_FAILS = 5;
export const PIN_LOCK_MS = 10 * 60_000;
export const DOWNLOAD_TOKEN_MS = 30 * 60_000;

export class LinkPinGate {
  constructor(
    private readonly repo: SharesRepo,
    private readonly secretKey: Buffer,
  ) {}

  /** What a row stores for `pin` on the link `token`. */
  hash(token: string, pin: string): string {
    return hmacHex(this.secretKey, `${token}\n${pin}`, 'share-pin');
  }

  /** Whether the row's gate is locked now (five wrong answers), and until when. */
  lockedUntil(s: ShareRow): string | null {
    return s.locked_until && Date.parse(s.locked_until) > Date.now() ? s.locked_until : null;
  }

  /** Whether `dt` passes the gate without counting a failure (a valid download token, or no PIN at all). */
  unlocked(s: ShareRow, dt?: string): boolean {
    return !s.pin_hash || (!!dt && this.tokenValid(s, dt));
  }

  /**
   * Passes the gate when the link has one: a valid download token, or the right PIN. No credential →
   * `unauthorised` (`reason: pin_required`); wrong PIN → `pin_wrong` with `tries_left`; five wrong answers
   * lock the link for 10 minutes and any PIN during the lock → `locked` with `retry_after`.
   */
  async check(share: ShareRow, cred: { pin?: string; dt?: string }): Promise<void> {
    if (!share.pin_hash) return;
    if (cred.dt && this.tokenValid(share, cred.dt)) return;
    if (cred.pin === undefined || cred.pin === '') throw new AppError('unauthorised', { reason: 'pin_required' }, { reason: 'pin_required' });
    await this.verifyPin(share, cred.pin);
  }

  /** Checks a PIN against the gate (see `check`) and hands out a download token. */
  async verify(share: ShareRow, pin: string): Promise<{ download_token: string; expires_at: string }> {
    if (share.pin_hash) await this.verifyPin(share, pin);
    return this.downloadToken(share);
  }

  /** A token that opens this one share for 30 minutes (`dt`). */
  downloadToken(share: ShareRow): { download_token: string; expires_at: string } {
    const exp = Date.now() + DOWNLOAD_TOKEN_MS;
    const body = `${share.id}.${exp}`;
    return { download_token: `${body}.${hmacHex(this.secretKey, `${body}.${share.token}`, 'share-dt')}`, expires_at: new Date(exp).toISOString() };
  }

  private async verifyPin(share: ShareRow, pin: string): Promise<void> {
    const now = Date.now();
    if (share.locked_until && Date.parse(share.locked_until) > now) throw lockedError(share.locked_until, now);
    if (safeEqual(this.hash(share.token, String(pin)), share.pin_hash!)) {
      await this.repo.pinPassed(share, share.id, new Date(now).toISOString());
      return;
    }
    const after = await this.repo.pinFailed(share, share.id, PIN_MAX_FAILS, new Date(now + PIN_LOCK_MS).toISOString(), new Date(now).toISOString());
    if (after.locked_until && Date.parse(after.locked_until) > now) throw lockedError(after.locked_until, now);
    throw new AppError('pin_wrong', { tries_left: PIN_MAX_FAILS - after.pin_fails }, { tries_left: PIN_MAX_FAILS - after.pin_fails });
  }

  private tokenValid(share: ShareRow, dt: string): boolean {
    const m = /^(\d+)\.(\d+)\.([0-9a-f]{64})$/.exec(dt);
    if (!m || Number(m[1]) !== share.id || Number(m[2]) < Date.now()) return false;
    return safeEqual(hmacHex(this.secretKey, `${m[1]}.${m[2]}.${share.token}`, 'share-dt'), m[3]);
  }
}

function lockedError(untilIso: string, now: number): AppError {
  const retry_after = Math.max(1, Math.ceil((Date.parse(untilIso) - now) / 1000));
  return new AppError('locked', { retry_after, until: untilIso }, { retry_after, until: untilIso });
}
