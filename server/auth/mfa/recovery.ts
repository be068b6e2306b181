/**
 * Recovery codes: ten per set, each 10 characters of Crockford's base32
 * (50 bits), shown as `xxxxx-xxxxx`; typed look-alikes (o, i, l) read as the
 * digits they resemble. Only a keyed hash is
 * stored (HMAC under the install's secret key, bound to the person), so a
 * copy of the database alone reveals no usable code.
 */
import { randomBytes } from 'node:crypto';
import { hmacHex } from '../../lib/crypto';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 10;

/** A new set of codes, formatted for people (`xxxxx-xxxxx`). */
export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const bytes = randomBytes(LENGTH);
    // 256 is a multiple of 32, so `b % 32` picks every letter equally often.
    const s = [...bytes].map((b) => ALPHABET[b % 32]).join('');
    return `${s.slice(0, 5)}-${s.slice(5)}`;
  });
}

/** What people type, made comparable: case, spaces and dashes do not matter; o, i and l are 0, 1 and 1. */
export const normalizeRecoveryCode = (code: string): string =>
  code
    .toLowerCase()
    .replace(/[\s-]+/g, '')
    .replace(/o/g, '0')
    .replace(/[il]/g, '1');

/** The stored form of `code` for `userId`. */
export const hashRecoveryCode = (key: Buffer, userId: number, code: string): string => hmacHex(key, `${userId}:${normalizeRecoveryCode(code)}`, 'mfa-recovery');
