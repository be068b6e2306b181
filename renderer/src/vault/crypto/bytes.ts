/**
 * Byte helpers and strict text encodings: base64url without padding (RFC 4648 §5) and lowercase base32
 * without padding (§6). Decoders answer null for anything but the canonical encoding (wrong alphabet,
 * impossible length, non-zero trailing bits); callers turn that into their own error code.
 */
export type Bytes = Uint8Array<ArrayBuffer>;

export const subtle = globalThis.crypto.subtle;
export const random = (n: number): Bytes => globalThis.crypto.getRandomValues(new Uint8Array(n));
export const utf8 = (text: string): Bytes => new TextEncoder().encode(text);

export function concat(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
}

/** `n` big-endian in `width` bytes (2 or 4). */
export function uint(n: number, width: 2 | 4): Bytes {
  const out = new Uint8Array(width);
  const view = new DataView(out.buffer);
  if (width === 2) view.setUint16(0, n);
  else view.setUint32(0, n);
  return out;
}

const B64U = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B32 = 'abcdefghijklmnopqrstuvwxyz234567';

function table(alphabet: string): Int8Array {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
}
const B64U_TABLE = table(B64U);
const B32_TABLE = table(B32);

function encode(bytes: Uint8Array, alphabet: string, bits: number): string {
  const mask = (1 << bits) - 1;
  let out = '';
  let acc = 0;
  let n = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    n += 8;
    while (n >= bits) out += alphabet[(acc >> (n -= bits)) & mask];
    acc &= (1 << n) - 1;
  }
  return n > 0 ? out + alphabet[(acc << (bits - n)) & mask] : out;
}

function decode(text: string, lookup: Int8Array, bits: number): Bytes | null {
  const out = new Uint8Array(Math.floor((text.length * bits) / 8));
  let acc = 0;
  let n = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const v = lookup[text.charCodeAt(i)] ?? -1;
    if (v < 0) return null;
    acc = (acc << bits) | v;
    n += bits;
    if (n >= 8) out[o++] = (acc >> (n -= 8)) & 255;
    acc &= (1 << n) - 1;
  }
  // Leftover bits are the last character's padding: fewer than one character's worth, and zero.
  return n >= bits || acc !== 0 ? null : out;
}

export const b64u = (bytes: Uint8Array): string => encode(bytes, B64U, 6);
export const fromB64u = (text: string): Bytes | null => decode(text, B64U_TABLE, 6);
export const base32 = (bytes: Uint8Array): string => encode(bytes, B32, 5);
export const fromBase32 = (text: string): Bytes | null => decode(text, B32_TABLE, 5);
