/**
 * TOTP (RFC 6238) on `otpauth`: SHA-1, 6 digits, 30 s steps, the form every
 * authenticator app reads from an `otpauth://` URI. A code is accepted for
 * the step before and after the current one (clock drift); the step it
 * matched is returned so the caller can refuse that step, and every earlier
 * one, the next time (a code seen once is never good again).
 */
import { Secret, TOTP } from 'otpauth';

export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted on either side of the current one. */
export const TOTP_WINDOW = 1;

/** A fresh 160-bit secret in base32 (what the manual-entry field of an app takes). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/...` URI an app scans; `issuer` and `account` name the entry in the app. */
export function totpUri(secret: string, issuer: string, account: string): string {
  return new TOTP({ issuer, label: account, secret: Secret.fromBase32(secret), period: TOTP_PERIOD_S, digits: TOTP_DIGITS, algorithm: 'SHA1' }).toString();
}

/** The time step `now` (ms since the epoch) falls in. */
export const totpStep = (now: number): number => Math.floor(now / 1000 / TOTP_PERIOD_S);

/**
 * The step `code` belongs to when it is right at `now` (within the window)
 * and newer than `lastStep`; null otherwise (wrong, too old, malformed, or a
 * replay of an accepted step). Spaces in the code are ignored. Comparison is
 * constant-time (otpauth compares with `timingSafeEqual`).
 */
export function matchTotp(secret: string, code: string, now: number, lastStep: number): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d+$/.test(token) || token.length !== TOTP_DIGITS) return null;
  const delta = TOTP.validate({
    token,
    secret: Secret.fromBase32(secret),
    period: TOTP_PERIOD_S,
    digits: TOTP_DIGITS,
    algorithm: 'SHA1',
    timestamp: now,
    window: TOTP_WINDOW,
  });
  if (delta === null) return null;
  const step = totpStep(now) + delta;
  return step > lastStep ? step : null;
}
