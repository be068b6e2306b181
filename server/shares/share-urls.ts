/** Where a share's public page is: for the person on this request, and for someone it is sent to. */
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { ShareRow } from './shares.repo';

/** A tenant's path prefix at the end of an origin (`https://host/t/acme`). */
const TENANT_PREFIX = /\/t\/[a-z0-9-]+$/;

const hrefAt = (start: string, s: Pick<ShareRow, 'kind' | 'token'>): string => `${start}/${s.kind === 'drop' ? 'd' : 's'}/${s.token}`;

export interface ShareUrlOptions {
  /** `SERVICE_PUBLIC_URL`, or '' when unset. */
  publicUrl: string;
  /** Multi-tenant mode: where a tenant's links start for someone elsewhere (auth's `TenantDirectory.address`). */
  tenantAddress?: (t: TenantScope, installation: string) => string;
}

/**
 * The public address of a share (`/s/` links, `/d/` file requests). `origin`: the request's, followed by the
 * tenant's `/t/<slug>` prefix when the request came through one; `SERVICE_PUBLIC_URL` replaces the origin
 * and keeps the prefix, so the link opens in the same tenant.
 */
export function shareUrl(o: ShareUrlOptions, s: Pick<ShareRow, 'kind' | 'token'>, origin: string): string {
  const start = o.publicUrl ? o.publicUrl + (TENANT_PREFIX.exec(origin)?.[0] ?? '') : origin;
  return hrefAt(start, s);
}

/**
 * The address of a share sent to someone not on this request (a mail's recipient, the assistant's answer):
 * its tenant's own address (its first host name, else the installation's address and `/t/<slug>`:
 * `TenantDirectory.address`) whatever host or prefix the sender used. `origin` as `shareUrl`'s; tenant 1 and
 * single-tenant mode get `shareUrl`'s address.
 */
export function sentShareUrl(o: ShareUrlOptions, s: Pick<ShareRow, 'kind' | 'token' | 'tenant_id'>, origin: string): string {
  if (!o.tenantAddress || s.tenant_id === DEFAULT_TENANT.tenant_id) return shareUrl(o, s, origin);
  return hrefAt(o.tenantAddress({ tenant_id: s.tenant_id }, o.publicUrl || origin.replace(TENANT_PREFIX, '')), s);
}
