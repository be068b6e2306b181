import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPlatformRoute } from './platform-routes';

test('the platform routes: the installation’s routes are listed, a tenant’s own admin routes are not', () => {
  const platform: Array<[string, string]> = [
    ['GET', '/api/platform/tenants'],
    ['DELETE', '/api/platform/tenants/2'],
    ['GET', '/api/admin/update'],
    ['POST', '/api/admin/update/apply'],
    ['GET', '/api/admin/gateways'],
    ['PATCH', '/api/admin/gateways/settings'],
    ['GET', '/api/admin/status'],
    ['PATCH', '/api/admin/metrics'],
    ['GET', '/metrics'],
    ['PATCH', '/api/admin/uplink'],
    ['PATCH', '/api/admin/governor'],
    ['GET', '/api/admin/auth/oidc'],
    ['PATCH', '/api/admin/protection'],
    ['PATCH', '/api/admin/app-store/config'],
    ['GET', '/api/admin/app-store/catalogue'],
    ['POST', '/api/admin/app-store/apps/notes/install'],
    ['POST', '/api/admin/app-plugins/keys'],
    ['DELETE', '/api/admin/app-plugins/store-keys/3'],
    ['POST', '/api/admin/app-plugins/license-revocations'],
    ['PATCH', '/api/admin/app-plugins/config'],
    ['GET', '/api/admin/replica/report'],
    ['POST', '/api/admin/replica/audit/run-now'],
    ['POST', '/api/admin/replica/drill/run-now'],
    // The routers match regardless of case and of a trailing slash: so must the gate.
    ['GET', '/API/Admin/Update'],
    ['patch', '/api/admin/gateways/settings/'],
    ['PATCH', '/api/admin/app-store/config/'],
    ['POST', '/api/admin/webhooks/legacy/'],
  ];
  const tenant: Array<[string, string]> = [
    ['GET', '/api/admin/users'],
    ['POST', '/api/admin/storages'],
    ['GET', '/api/admin/audit'],
    ['GET', '/api/admin/gateways/nfs/exports'],
    ['GET', '/api/admin/replication-targets'],
    ['PATCH', '/api/admin/replica/rules/3'],
    ['GET', '/api/admin/replica/failures'],
    ['POST', '/api/admin/replica/fix'],
    ['GET', '/api/admin/replica/status'],
    ['GET', '/api/admin/protection'],
    ['POST', '/api/admin/app-plugins/apps'],
    ['PUT', '/api/admin/app-plugins/apps/notes/license'],
    ['GET', '/api/admin/app-plugins/keys'],
    ['GET', '/api/admin/app-plugins/license-revocations'],
    ['GET', '/api/admin/updates-of-something-else'],
    ['GET', '/api/files/manager'],
    ['GET', '/api/platformer'],
  ];
  for (const [m, p] of platform) assert.equal(isPlatformRoute(m, p), true, `${m} ${p}`);
  for (const [m, p] of tenant) assert.equal(isPlatformRoute(m, p), false, `${m} ${p}`);
});
