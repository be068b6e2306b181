/**
 * Selects the request's tenant (docs/tenants.md, "Selecting a tenant") and puts it on `ctx.state.tenant`,
 * the one place every later middleware and route reads it from. Multi-tenant mode: a `/t/<slug>/` prefix
 * (stripped here, before routing) or the `Host` (a tenant's host names, exact, lower case, port ignored);
 * neither → tenant 1. An unknown slug is 404 `not_found`. A suspended tenant's sign-in doors answer
 * `unauthenticated`, and the request is marked so that no credential or link of it works. A host that is no tenant's is the installation's
 * own address (its IP, `localhost`, the public URL) and so tenant 1's: every request carries a Host.
 * Single-tenant mode: always tenant 1, nothing read.
 */
import { AppError } from '../../errors';
import { DEFAULT_TENANT } from '../../db';
import type { TenantDirectory } from '../../auth';
import type { Mw } from '../context';

/** The sign-in doors (password, its second step, sign-up, set-up, OIDC). */
const SIGN_IN = /^\/api\/auth\/(login|signup|setup|oidc)(\/|$)/;
const PREFIX = /^\/t\/([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?=\/|$)/;

export function selectTenant(directory: TenantDirectory | null): Mw {
  if (!directory)
    return (ctx, next) => {
      ctx.state.tenant = DEFAULT_TENANT;
      return next();
    };
  return async (ctx, next) => {
    const m = PREFIX.exec(ctx.path);
    const entry = m ? directory.bySlug(m[1]) : directory.byHost(ctx.hostname.toLowerCase());
    if (m && !entry) throw new AppError('not_found');
    if (m) {
      ctx.path = ctx.path.slice(m[0].length) || '/';
      ctx.state.tenantBase = m[0];
    }
    ctx.state.tenant = entry?.scope ?? DEFAULT_TENANT;
    if (entry?.suspended) {
      // Suspended: nobody signs in, no session or key resolves (auth.ts) and no link is found (linkTenant).
      if (SIGN_IN.test(ctx.path)) throw new AppError('unauthenticated');
      ctx.state.tenantSuspended = true;
    }
    await next();
  };
}
