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
  if (next[0] !== '/' || next[1] === '/') return '/';
  // eslint-disable-next-line no-control-regex
  if (/[\\\x00-\x1f\x7f]/.test(next)) return '/';
  // A last check by the URL parser itself: resolved against a placeholder origin, the path must stay on it.
  try {
    const base = 'http://local.invalid';
    const u = new URL(next, base);
    if (u.origin !== base) return '/';
    return u.pathname + u.search + u.hash;
  } catch {
    return '/';
  }
}
