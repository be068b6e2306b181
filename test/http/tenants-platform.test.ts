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
  let betaId: number;

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    operator = await s.login();
    betaId = await addTenantRow(s, 'beta', [BETA]);
    const users = s.server.services.auth.users;
    await users.create({ tenant_id: betaId }, { email: 'boss@beta.test', password: 'beta-password-1', role: 'admin' });
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

  test('a tenant admin gets 403 supertenant_only on /api/platform/*; a plain person the admin routes’ 403', async () => {
    const beta = onHost(s, BETA);
    for (const r of [
      await beta('GET', '/api/platform/tenants', { token: betaAdmin }),
      await beta('POST', '/api/platform/tenants', { token: betaAdmin, body: {} }),
      await s.api('DELETE', `/api/platform/tenants/${betaId}`, { token: secondAdmin }),
    ]) {
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error, 'supertenant_only');
    }
  });

  test('the operator creates, changes, suspends, resumes and deletes a tenant', async () => {
    const made = await s.api('POST', '/api/platform/tenants', {
      token: operator,
      body: {
        slug: 'gamma',
        name: 'Gamma office',
        hostnames: ['Gamma.Example.test'],
        quotas: { bytes: 1_000_000, people: 5 },
        branding: { colour: '#112233' },
        admin: { email: 'root@gamma.test', password: 'gamma-password-1' },
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const t = made.body.tenant;
    assert.deepEqual(
      [t.slug, t.name, t.hostnames, t.status, t.quotas, t.branding],
      ['gamma', 'Gamma office', ['gamma.example.test'], 'active', { bytes: 1_000_000, people: 5 }, { colour: '#112233' }],
    );
    const gamma = onHost(s, 'gamma.example.test');
    const admin = await gamma('POST', '/api/auth/login', { body: { email: 'root@gamma.test', password: 'gamma-password-1' } });
    assert.equal(admin.status, 200, 'its first admin signs in on its host');
    assert.equal((await s.api('POST', '/t/gamma/api/auth/login', { body: { email: 'root@gamma.test', password: 'gamma-password-1' } })).status, 200);
    assert.equal(
      (await s.api('POST', '/api/auth/login', { body: { email: 'root@gamma.test', password: 'gamma-password-1' } })).status,
      401,
      'nobody on tenant 1',
    );

    // Refusals in the spec's envelope.
    const again = await s.api('POST', '/api/platform/tenants', {
      token: operator,
      body: { slug: 'gamma', name: 'Twice', admin: { email: 'x@gamma.test', password: 'gamma-password-1' } },
    });
    assert.deepEqual([again.status, again.body.error, again.body.details?.field], [409, 'name_taken', 'slug']);
    const badSlug = await s.api('POST', '/api/platform/tenants', {
      token: operator,
      body: { slug: 'Not A Label', name: 'x', admin: { email: 'x@x.test', password: 'gamma-password-1' } },
    });
    assert.deepEqual([badSlug.status, badSlug.body.error, badSlug.body.details?.field], [400, 'validation_failed', 'slug']);
    const hostTaken = await s.api('PATCH', `/api/platform/tenants/${betaId}`, { token: operator, body: { hostnames: ['gamma.example.test'] } });
    assert.deepEqual([hostTaken.status, hostTaken.body.error, hostTaken.body.details?.field], [400, 'validation_failed', 'hostnames']);
    const noAdmin = await s.api('POST', '/api/platform/tenants', {
      token: operator,
      body: { slug: 'delta', name: 'Delta', admin: { email: 'nope', password: 'gamma-password-1' } },
    });
    assert.equal(noAdmin.status >= 400, true);
    assert.equal(
      (await s.api('GET', '/api/platform/tenants', { token: operator })).body.tenants.some((x: { slug: string }) => x.slug === 'delta'),
      false,
      'no tenant is left behind',
    );

    const listed = await s.api('GET', '/api/platform/tenants', { token: operator });
    assert.deepEqual(
      listed.body.tenants.map((x: { slug: string }) => x.slug),
      ['default', 'beta', 'gamma'],
    );
    const renamed = await s.api('PATCH', `/api/platform/tenants/${t.id}`, { token: operator, body: { name: 'Gamma & co' } });
    assert.equal(renamed.body.tenant.name, 'Gamma & co');

    const early = await s.api('DELETE', `/api/platform/tenants/${t.id}`, { token: operator });
    assert.deepEqual([early.status, early.body.error], [409, 'conflict'], 'an active tenant is not deleted');
    const one = await s.api('PATCH', '/api/platform/tenants/1', { token: operator, body: { status: 'suspended' } });
    assert.deepEqual([one.status, one.body.details?.field], [400, 'status'], 'tenant 1 is never suspended');

    assert.equal((await s.api('PATCH', `/api/platform/tenants/${t.id}`, { token: operator, body: { status: 'suspended' } })).body.tenant.status, 'suspended');
    assert.equal((await s.api('PATCH', `/api/platform/tenants/${t.id}`, { token: operator, body: { status: 'active' } })).body.tenant.status, 'active');
    assert.equal((await gamma('GET', '/api/auth/me', { token: admin.body.token })).status, 200, 'resumed: its session works again');
    assert.equal((await s.api('PATCH', `/api/platform/tenants/${t.id}`, { token: operator, body: { status: 'suspended' } })).status, 200);
    const del = await s.api('DELETE', `/api/platform/tenants/${t.id}`, { token: operator });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.equal((await s.api('GET', `/api/platform/tenants/${t.id}`, { token: operator })).status, 404);
    assert.equal((await s.api('GET', '/t/gamma/api/auth/me')).status, 404, 'its prefix is gone');
    const [{ n }] = await s.server.db.async.sql<{ n: number | string }>('SELECT COUNT(*) AS n FROM users WHERE tenant_id = ?', [t.id]);
    assert.equal(Number(n), 0, 'its people went with it');

    // Its id is never given again (SQLite reuses a deleted row's id): a new tenant must not inherit what other
    // modules keep under it, such as an audit row written in it.
    await s.server.db.async.sql("INSERT INTO audit (tenant_id, ts, action) VALUES (?, ?, 'gamma.left')", [t.id, new Date().toISOString()]);
    const next = await s.api('POST', '/api/platform/tenants', {
      token: operator,
      body: { slug: 'gamma', name: 'Gamma again', hostnames: ['gamma.example.test'], admin: { email: 'root@gamma.test', password: 'gamma-password-2' } },
    });
    assert.equal(next.status, 201, JSON.stringify(next.body));
    assert.ok(next.body.tenant.id > t.id, `a new id: ${next.body.tenant.id} after ${t.id}`);
    assert.deepEqual(
      (await s.api('GET', '/api/platform/tenants', { token: operator })).body.tenants.map((x: { slug: string }) => x.slug),
      ['default', 'beta', 'gamma'],
      'the deleted one is not listed; its slug and host name are free again',
    );
    const root = await gamma('POST', '/api/auth/login', { body: { email: 'root@gamma.test', password: 'gamma-password-2' } });
    assert.equal(root.status, 200, JSON.stringify(root.body));
    const log = await gamma('GET', '/api/admin/audit?limit=200', { token: root.body.token });
    assert.equal(log.status, 200, JSON.stringify(log.body));
    assert.ok(!JSON.stringify(log.body).includes('gamma.left'), 'the old tenant’s audit row is not the new one’s');
  });
});
