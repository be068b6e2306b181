/**
 * The app's base path: '' normally; `/t/<slug>` when the page came through a tenant's path prefix
 * (docs/tenants.md), which the server writes into the page as `<meta name="filedock-base">`. Routes and
 * same-origin requests carry it, so the app stays in the tenant it was opened in.
 */
export const BASE = typeof document === 'undefined' ? '' : (document.querySelector<HTMLMetaElement>('meta[name="filedock-base"]')?.content ?? '');

/** `path` (same-origin, absolute: `/api/...`, `/files/...`) under the base; anything else, or a path already under it, unchanged. */
export const withBase = (path: string, base = BASE): string =>
  base && path.startsWith('/') && !path.startsWith('//') && path !== base && !path.startsWith(`${base}/`) ? base + path : path;

/** A location's pathname without the base (what the app's routes are matched against). */
export const withoutBase = (pathname: string, base = BASE): string =>
  base && (pathname === base || pathname.startsWith(`${base}/`)) ? pathname.slice(base.length) || '/' : pathname;
