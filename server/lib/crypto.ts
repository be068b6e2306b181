/**
 * Secret key handling, AES-256-GCM for stored credentials, HMAC stamps and
 * constant-time comparison. Nothing here knows what it protects.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual, createHash } from 'node:crypto';

const PREFIX = 'enc:v1:';

/** Encrypts `plain` under a 32-byte key; the output is self-describing text. */
export function encrypt(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return PREFIX + Buffer.concat([iv, c.getAuthTag(), body]).toString('base64url');
}

export const isEncrypted = (v: unknown): v is string => typeof v === 'string' && v.startsWith(PREFIX);

/** Reverses `encrypt`; throws when the text was tampered with or the key differs. */
export function decrypt(key: Buffer, text: string): string {
  const raw = Buffer.from(text.slice(PREFIX.length), 'base64url');
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
}

/** Hex HMAC-SHA256 of `data` under `key` (optionally namespaced so uses never collide). */
export const hmacHex = (key: Buffer, data: string, purpose = ''): string =>
  createHmac('sha256', key)
    .update(purpose ? `${purpose}\n${data}` : data)
    .digest('hex');

/** Constant-time string equality; false for different lengths without leaking where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
export const randomToken = (bytes = 24): string => randomBytes(bytes).toString('base64url');
/** A decimal PIN of `digits` digits from a uniform source. */
export function randomDigits(digits: number): string {
  let out = '';
  while (out.length < digits) {
    const b = randomBytes(1)[0];
    if (b < 250) out += String(b % 10);
  }
  return out;
}
