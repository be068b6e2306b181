/**
 * A rough strength hint for a vault passphrase: estimated bits from its length
 * and the kinds of characters in it, with repeats and runs counted once. It is a
 * hint for people choosing one, not a guarantee (Argon2id slows guessing; it
 * cannot save "password1").
 */
export type Strength = 'weak' | 'fair' | 'good' | 'strong';

/** At least this many characters before a vault can be set up. */
export const MIN_PASSPHRASE = 10;

export function estimateBits(p: string): number {
  const chars = [...p.normalize('NFC')];
  let pool = 0;
  if (chars.some((c) => /[a-z]/.test(c))) pool += 26;
  if (chars.some((c) => /[A-Z]/.test(c))) pool += 26;
  if (chars.some((c) => /[0-9]/.test(c))) pool += 10;
  if (chars.some((c) => /[^a-zA-Z0-9]/.test(c) && c.charCodeAt(0) < 128)) pool += 33;
  if (chars.some((c) => c.charCodeAt(0) >= 128)) pool += 100;
  // A character equal to the one before, or one step along from it (aaaa, abcd, 1234), adds almost nothing.
  let effective = 0;
  for (let i = 0; i < chars.length; i++) {
    const step = i > 0 ? chars[i].codePointAt(0)! - chars[i - 1].codePointAt(0)! : 99;
    effective += Math.abs(step) <= 1 ? 0.25 : 1;
  }
  return Math.round(effective * Math.log2(Math.max(pool, 1)));
}

export function strengthOf(p: string): Strength {
  const bits = estimateBits(p);
  if (p.length < MIN_PASSPHRASE || bits < 50) return 'weak';
  if (bits < 65) return 'fair';
  if (bits < 85) return 'good';
  return 'strong';
}
