/**
 * Public pages opened through a tenant's path prefix (`/t/<slug>/s/…`, docs/tenants.md) keep their own links
 * in that tenant: the pages write root-relative addresses (`/s/<token>?dl=1`, the PIN form's action, the drop
 * API), which would leave the prefix and land in tenant 1, where the token is not found.
 */

/** The attributes our pages put a same-origin address in (values are escaped: a quote never ends one early). */
const ADDRESS = /\b(href|src|action|data-download|data-api)="\/(?!\/)/g;

/** `html` with every root-relative address under `base` (`/t/<slug>`); unchanged without one. */
export function underBase(html: string, base: string | undefined): string {
  return base ? html.replace(ADDRESS, `$1="${base}/`) : html;
}

/** A root-relative `path` under the request's tenant base, for a redirect. */
export const basePath = (base: string | undefined, path: string): string => (base ?? '') + path;
