/**
 * Multi-tenant mode, the platform operator (docs/tenants.md, "Who is who"; spec Authentication 3): tenant 1's
 * first admin is one; a tenant admin (another tenant's, or tenant 1's second admin) gets 403
 * `supertenant_only` on the platform routes, and keeps its own tenant's admin routes.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { addTenantRow, onHost } from '../helpers/tenants';

const BETA = 'beta.example.test';

describe('tenants: platform routes', () => {
  let s: TestServer;
  let operator: string;
  let betaAdmin: string;
  let secondAdmin: string;

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    operator = await s.login();
    await addTenantRow(s, 2, 'beta', [BETA]);
    const users = s.server.services.auth.users;
    await users.create({ tenant_id: 2 }, { email: 'boss@beta.test', password: 'beta-password-1', role: 'admin' });
    await users.create({ tenant_id: 1 }, { email: 'second@example.test', password: 'second-password', role: 'admin' });
    betaAdmin = (await onHost(s, BETA)('POST', '/api/auth/login', { body: { email: 'boss@beta.test', password: 'beta-password-1' } })).body.token;
    secondAdmin = await s.login('second@example.test', 'second-password');
  });
  after(() => s.close());

  test('a tenant admin gets 403 supertenant_only on an update route; the operator does not', async () => {
    const beta = onHost(s, BETA);
    for (const r of [
      await beta('GET', '/api/admin/update', { token: betaAdmin }),
      await beta('POST', '/api/admin/update/check', { token: betaAdmin }),
      await s.api('GET', '/api/admin/update', { token: secondAdmin }),
      await beta('PATCH', '/api/admin/uplink', { token: betaAdmin, body: {} }),
    ]) {
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error, 'supertenant_only');
    }
    assert.equal((await s.api('GET', '/api/admin/update', { token: operator })).status, 200);
    // Its own tenant's admin routes stay its own.
    const users = await beta('GET', '/api/admin/users', { token: betaAdmin });
    assert.equal(users.status, 200, JSON.stringify(users.body));
    assert.deepEqual(
      users.body.users.map((u: { email: string }) => u.email),
      ['boss@beta.test'],
    );
  });
});
