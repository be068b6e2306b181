/**
 * The platform operator's routes (docs/tenants.md, "Who is who"; spec Authentication 3): what is the
 * installation's, not a tenant's. In multi-tenant mode a tenant admin (the `admin` role without
 * `platform_operator`) gets 403 `supertenant_only` there; people without the admin role meet the route's
 * own refusal. Beside key-scope.ts's table, matched the same way (`METHOD /path`); single-tenant mode
 * installs no gate.
 */
import { AppError } from '../../errors';
import type { Mw } from '../context';

const ANY = '[A-Z]+';
const WRITE = '(POST|PUT|PATCH|DELETE)';
const route = (methods: string, path: string) => new RegExp(`^${methods} /${path}`);

/** Matched against `METHOD /path` after the tenant prefix is stripped. */
export const PLATFORM_ROUTES: readonly RegExp[] = [
  // Tenants themselves (the operator's tenant routes).
  route(ANY, 'api/platform(/|$)'),
  // Updates (spec Authentication 3).
  route(ANY, 'api/admin/update(/|$)'),
  // Gateway listeners and how they show encrypted folders (one set of ports for every tenant); NFS exports are a tenant's.
  route(ANY, 'api/admin/gateways/?$'),
  route(ANY, 'api/admin/gateways/settings/?$'),
  // The status page and the metrics export.
  route(ANY, 'api/admin/status(/|$)'),
  route(ANY, 'api/admin/metrics(/|$)'),
  route(ANY, 'metrics(/|$)'),
  // Global settings (the `settings` table is the installation's until settings are per tenant).
  route(ANY, 'api/admin/(uplink|governor|homes|backups|external|meter/prices|auth/settings|auth/oidc|replica/settings)(/|$)'),
  // Replication's installation-wide content audit, restore drill and report (every tenant's targets and storages).
  route(ANY, 'api/admin/replica/(audit|drill|report)(/|$)'),
  route(ANY, 'api/admin/app-plugins/config/?$'),
  // Apps are a tenant's (docs/tenants.md, "Step 1: apps"); the trust lists are the installation's (a tenant
  // admin reads them), and the app store, its connections, updates and licences online, is the operator's.
  route(WRITE, 'api/admin/app-plugins/(keys|store-keys|license-revocations)(/|$)'),
  route(ANY, 'api/admin/app-store(/|$)'),
  route(WRITE, 'api/admin/(protection|assistant)(/|$)'),
  route(WRITE, 'api/admin/webhooks/legacy/?$'),
];

/**
 * Whether `METHOD path` is a platform route. The routers match paths case-insensitively and with or without a
 * trailing slash, so this does too: `/API/ADMIN/UPDATE` reaches the update route and must meet the gate.
 */
export const isPlatformRoute = (method: string, path: string): boolean => {
  const lower = path.toLowerCase();
  // Every entry above starts with one of these: most requests (listings, downloads) are decided here.
  if (!lower.startsWith('/api/admin/') && !lower.startsWith('/api/platform') && !lower.startsWith('/metrics')) return false;
  const line = `${method.toUpperCase()} ${lower}`;
  return PLATFORM_ROUTES.some((re) => re.test(line));
};

/** Refuses a tenant admin (an admin who is no platform operator) on a platform route: 403 `supertenant_only`. */
export const platformOnly: Mw = async (ctx, next) => {
  const p = ctx.state.principal;
  if (p && p.role === 'admin' && !p.platform_operator && isPlatformRoute(ctx.method, ctx.path)) throw new AppError('supertenant_only');
  await next();
};
