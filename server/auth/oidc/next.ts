/**
 * Where a sign-in returns to: a path on this server only, never an open
 * redirect. Browsers read `//host`, `/\host` and `\\host` as another host and
 * drop tabs and newlines inside URLs (`/\t/host` becomes `//host`), so all of
 * those are refused along with anything that has a scheme.
 */
const MAX = 2048;

/**
 * `next` when it is a local path (one leading `/`, then no `/` or `\` right
 * after it, no backslash or control character anywhere, at most 2048
 * characters); otherwise `/`.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length === 0 || next.length > MAX) return '/';
  if (!localShape(next)) return '/';
  // Resolved by the URL parser against a placeholder origin, the path must stay there, and its normal form
  // must still be local: `/..//host` resolves to `//host`.
  try {
    const base = 'http://local.invalid';
    const u = new URL(next, base);
    const out = u.pathname + u.search + u.hash;
    return u.origin === base && localShape(out) ? out : '/';
  } catch {
    return '/';
  }
}

const localShape = (p: string): boolean => p[0] === '/' && p[1] !== '/' && !/[\\\x00-\x1f\x7f]/.test(p);
