/**
 * What both example apps need inside the QuickJS sandbox (docs/app-plugins.md,
 * "Sandbox"): there is no Node, no TextEncoder, no atob/btoa and no timers, and
 * bytes cross the host API as base64. Bundled into each app's code.js.
 */

// pdf-lib waits for a "tick" (setTimeout 0) every N objects while parsing and saving; a microtask is enough here.
if (typeof globalThis.setTimeout !== 'function')
  globalThis.setTimeout = (f) => {
    Promise.resolve().then(f);
    return 0;
  };

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Uint8Array(128).fill(255);
for (let i = 0; i < 64; i++) DECODE[ALPHABET.charCodeAt(i)] = i;
DECODE[45] = 62;
DECODE[95] = 63; // base64url too
/** Two characters → 12 bits in one look-up: decoding runs about twice as fast in QuickJS as one character at a time. */
const PAIR = new Uint16Array(128 * 128);
const SYMBOLS = ALPHABET + '-_';
for (const a of SYMBOLS) for (const b of SYMBOLS) PAIR[a.charCodeAt(0) * 128 + b.charCodeAt(0)] = (DECODE[a.charCodeAt(0)] << 6) | DECODE[b.charCodeAt(0)];
const PAIRS = [];
for (let i = 0; i < 4096; i++) PAIRS.push(ALPHABET[i >> 6] + ALPHABET[i & 63]);

/** base64 (or base64url; padding and whitespace ignored) → bytes; a character outside the alphabet throws. */
export function fromBase64(s) {
  let clean = s;
  if (/[^A-Za-z0-9+/_-]/.test(s)) clean = s.replace(/[\s=]+/g, '');
  if (/[^A-Za-z0-9+/_-]/.test(clean)) throw new Error('not base64');
  const n = clean.length;
  if (n % 4 === 1) throw new Error('not base64');
  const out = new Uint8Array(Math.floor((n * 3) / 4));
  let j = 0,
    i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = (PAIR[clean.charCodeAt(i) * 128 + clean.charCodeAt(i + 1)] << 12) | PAIR[clean.charCodeAt(i + 2) * 128 + clean.charCodeAt(i + 3)];
    out[j] = v >> 16;
    out[j + 1] = v >> 8;
    out[j + 2] = v;
    j += 3;
  }
  if (n - i >= 2) {
    const v = (DECODE[clean.charCodeAt(i)] << 18) | (DECODE[clean.charCodeAt(i + 1)] << 12) | (n - i === 3 ? DECODE[clean.charCodeAt(i + 2)] << 6 : 0);
    out[j++] = v >> 16;
    if (n - i === 3) out[j++] = (v >> 8) & 255;
  }
  return out;
}

/** bytes → base64 (with padding). */
export function toBase64(u, start = 0, end = u.length) {
  const parts = [];
  let chunk = [];
  let i = start;
  for (; i + 3 <= end; i += 3) {
    const v = (u[i] << 16) | (u[i + 1] << 8) | u[i + 2];
    chunk.push(PAIRS[v >> 12] + PAIRS[v & 4095]);
    if (chunk.length === 4096) {
      parts.push(chunk.join(''));
      chunk = [];
    }
  }
  if (end - i === 1) chunk.push(ALPHABET[u[i] >> 2] + ALPHABET[(u[i] & 3) << 4] + '==');
  else if (end - i === 2) {
    const v = (u[i] << 8) | u[i + 1];
    chunk.push(ALPHABET[v >> 10] + ALPHABET[(v >> 4) & 63] + ALPHABET[(v & 15) << 2] + '=');
  }
  parts.push(chunk.join(''));
  return parts.join('');
}

/** Time spent waiting for the host, so an app can tell its own CPU time (the sandbox's budget) from the wall clock. */
export const clock = {
  hostMs: 0,
  start: Date.now(),
  cpuMs() {
    return Date.now() - this.start - this.hostMs;
  },
  reset() {
    this.hostMs = 0;
    this.start = Date.now();
  },
};

export async function call(method, args) {
  const t = Date.now();
  try {
    return await host.call(method, args);
  } finally {
    clock.hostMs += Date.now() - t;
  }
}

export const READ_PART = 512 * 1024;
export const WRITE_PART = 600 * 1024;

/** A whole file as bytes, read in 512 KiB pieces (`files.read` holds at most that). */
export async function readFile(path, maxBytes = 48 * 1024 * 1024) {
  const first = await call('files.read', { path, offset: 0, length: READ_PART, encoding: 'base64' });
  if (first.size > maxBytes) throw new Error('error.too_big');
  const out = new Uint8Array(first.size);
  let at = 0;
  let piece = first;
  for (;;) {
    const bytes = fromBase64(piece.data);
    out.set(bytes.subarray(0, Math.min(bytes.length, out.length - at)), at);
    at += bytes.length;
    if (piece.eof || bytes.length === 0 || at >= out.length) break;
    piece = await call('files.read', { path, offset: at, length: READ_PART, encoding: 'base64' });
  }
  return at >= out.length ? out : out.subarray(0, at);
}

/** Writes bytes as one file: one `files.write`, or parts (`more: true`) committed by the last one. */
export async function writeFile(path, bytes, overwrite) {
  for (let at = 0; ; at += WRITE_PART) {
    const end = Math.min(bytes.length, at + WRITE_PART);
    const last = end >= bytes.length;
    const r = await call('files.write', { path, data: toBase64(bytes, at, end), encoding: 'base64', overwrite: !!overwrite, ...(last ? {} : { more: true }) });
    if (last) return r;
  }
}

/** Writes to `<base><ext>`, or `<base> (2)<ext>`, ... when that name is taken (never replaces a file). */
export async function writeFree(dir, base, ext, bytes) {
  for (let n = 1; n <= 50; n++) {
    const path = `${dir}/${base}${n === 1 ? '' : ` (${n})`}${ext}`;
    try {
      return await writeFile(path, bytes, false);
    } catch (e) {
      if (e && e.code === 'conflict') continue;
      throw e;
    }
  }
  throw new Error('error.no_free_name');
}

export const dirOf = (p) => p.slice(0, p.lastIndexOf('/'));
export const baseOf = (name) => (name.lastIndexOf('.') > 0 ? name.slice(0, name.lastIndexOf('.')) : name);

/** A translator over the packs bundled into the app (the same files the server reads for labels). */
export function texts(packs, fallback) {
  return (lang, key, params) => {
    const l = String(lang || '').slice(0, 2);
    let s = (packs[lang] && packs[lang][key]) ?? (packs[l] && packs[l][key]) ?? packs[fallback][key] ?? key;
    for (const [k, v] of Object.entries(params || {})) s = s.split(`{${k}}`).join(String(v));
    return s;
  };
}
