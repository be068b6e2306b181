/**
 * Password hashing with scrypt (memory-hard) at N=2^17, r=8, p=1, OWASP's
 * current minimum for scrypt: 128 MiB and 0.69-1.06 s per hash measured
 * here (medians of 5 on the shared 2-core machine, against 0.17-0.25 s for
 * the former N=2^15; docs/auth.md). Runs on libuv's thread pool so the event loop stays free;
 * the login throttle runs before it so guessing cannot exhaust the CPU, and
 * at most two hashes run at once per process (2 x 128 MiB), the rest wait
 * their turn. Hashes with weaker parameters still verify; `needsRehash` tells
 * the sign-in to replace them.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';

/** The default cost, log2 of N: OWASP's current minimum for scrypt. */
export const DEFAULT_COST = 17;
let N = 2 ** DEFAULT_COST;
const R = 8;
const P = 1;
const KEYLEN = 32;
/** Hashes (or verifications) computed at once; a further one waits, never fails. */
const MAX_RUNNING = 2;

let running = 0;
let peak = 0;
const waiting: Array<() => void> = [];

/** Hashes running now and the most seen at once since the last reset: instrumentation for tests. */
export function kdfLoad(reset = false): { running: number; peak: number } {
  const load = { running, peak };
  if (reset) peak = running;
  return load;
}

async function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  // A finished hash hands its slot straight to the next waiter, so no newcomer can slip in between.
  if (running < MAX_RUNNING) running++;
  else await new Promise<void>((go) => waiting.push(go));
  peak = Math.max(peak, running);
  try {
    return await new Promise((resolve, reject) =>
      // scrypt needs 128·N·r bytes; the default maxmem (32 MiB) is below that for N=2^17.
      scryptCb(password.normalize('NFKC'), salt, KEYLEN, { N: n, r, p, maxmem: 2 * 128 * n * r }, (err, key) => (err ? reject(err) : resolve(key))),
    );
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/**
 * Sets the cost (log2 of N) of new hashes and of the rehash check (SERVICE_PASSWORD_COST, applied by the
 * composition root). Stored hashes keep verifying whatever the setting; a weaker one is replaced at its next
 * right sign-in. The test runner lowers it to 15 (docs/testing.md): every test server signs people in.
 */
export function setPasswordCost(log2N: number): void {
  N = 2 ** log2N;
}

/** `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Constant-time check; false for a malformed or missing hash. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    // Spend comparable time so a missing account is not faster than a wrong password.
    await scrypt(password, Buffer.alloc(16), N, R, P);
    return false;
  }
  const [, n, r, p, salt, hash] = parts;
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  const want = Buffer.from(hash, 'base64url');
  return want.length === key.length && timingSafeEqual(want, key);
}

/** True for a well-formed stored hash with weaker parameters than today's (a stronger one is kept). */
export function needsRehash(stored: string | null): boolean {
  const [kind, n, r, p] = (stored ?? '').split('$');
  return kind === 'scrypt' && (Number(n) < N || Number(r) < R || Number(p) < P);
}

/** Password policy shared by every surface that sets one. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string') return 'must be a string';
  if (password.length < 8) return 'at least 8 characters';
  if (password.length > 1024) return 'at most 1024 characters';
  return null;
}
