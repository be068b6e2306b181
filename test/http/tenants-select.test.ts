/**
 * Multi-tenant mode, selecting a tenant (docs/tenants.md, step 2): by host name or `/t/<slug>/` prefix.
 * Two tenants hold a person with the same e-mail and password; each signs in only to its own tenant's
 * account, a session or key of one tenant is no credential on the other's host, and a link token of B is
 * not found on A's host. An unknown prefix is 404.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { addTenantRow, onHost } from '../helpers/tenants';

const SAME = { email: 'sam@example.test', password: 'same-password-1' };
const BETA = 'beta.example.test';

describe('tenants: selecting a tenant by host or prefix', () => {
  let s: TestServer;
  let rootB: { dir: string; cleanup: () => void };
  let beta: ReturnType<typeof onHost>;
  let home: ReturnType<typeof onHost>;
  let samA: number;
  let samB: number;

  before(async () => {
    rootB = tempDir('filedock-tenant-b-');
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    const b = { tenant_id: await addTenantRow(s, 'beta', [BETA]) };
    const users = s.server.services.auth.users;
    samA = (await users.create({ tenant_id: 1 }, { ...SAME, role: 'admin' })).id;
    samB = (await users.create(b, { ...SAME, role: 'admin' })).id;
    await users.create(b, { email: 'only-b@example.test', password: 'only-b-password', role: 'user' });
    beta = onHost(s, BETA);
    home = onHost(s, '127.0.0.1');
  });
  after(async () => {
    await s.close();
    rootB.cleanup();
  });

  const signIn = async (on: ReturnType<typeof onHost>, path = '/api/auth/login', who = SAME) => on('POST', path, { body: who });

  test('the same e-mail and password sign in to each tenant’s own account, by host and by prefix', async () => {
    assert.notEqual(samA, samB);
    const a = await signIn(home);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.user.id, samA);
    const b = await signIn(beta);
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.equal(b.body.user.id, samB);
    const byPrefix = await signIn(home, '/t/beta/api/auth/login');
    assert.equal(byPrefix.status, 200, JSON.stringify(byPrefix.body));
    assert.equal(byPrefix.body.user.id, samB);
    // Someone of tenant B only is nobody on tenant A's host.
    const only = { email: 'only-b@example.test', password: 'only-b-password' };
    assert.equal((await signIn(beta, '/api/auth/login', only)).status, 200);
    const refused = await signIn(home, '/api/auth/login', only);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_credentials');
  });

  test('a session cookie or token made on one tenant is unauthenticated on the other’s host', async () => {
    const b = await signIn(beta);
    assert.ok(b.cookie, 'the sign-in set the session cookie');
    assert.equal((await beta('GET', '/api/auth/me', { cookie: b.cookie })).body.user.id, samB);
    assert.equal((await home('GET', '/t/beta/api/auth/me', { cookie: b.cookie })).body.user.id, samB, 'the prefix selects the same tenant');
    for (const r of [await home('GET', '/api/auth/me', { cookie: b.cookie }), await home('GET', '/api/auth/me', { token: b.body.token })]) {
      assert.equal(r.status, 401, JSON.stringify(r.body));
      assert.equal(r.body.error, 'unauthenticated');
    }
    const a = await signIn(home);
    const replayed = await beta('GET', '/api/auth/me', { cookie: a.cookie });
    assert.equal(replayed.status, 401);
    assert.equal((await home('GET', '/api/auth/me', { cookie: a.cookie })).body.user.id, samA, 'still a session on its own host');
  });

  test('an API key of tenant B is no key on tenant A’s host', async () => {
    const b = await signIn(beta);
    const made = await beta('POST', '/api/auth/keys', { token: b.body.token, body: { name: 'b-key', verbs: ['files:read'] } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal((await beta('GET', '/api/auth/me', { token: made.body.token })).body.user.id, samB);
    const onA = await home('GET', '/api/auth/me', { token: made.body.token });
    assert.equal(onA.status, 401);
    assert.equal(onA.body.error, 'unauthenticated');
    assert.equal((await beta('GET', '/api/auth/me', { token: made.body.token })).status, 200, 'a cached key is still its tenant’s');
  });

  test('a link token of tenant B is not found on tenant A’s host, and found on B’s host and prefix', async () => {
    const token = (await signIn(beta)).body.token;
    const st = await beta('POST', '/api/admin/storages', { token, body: { name: 'Bee', driver: 'local', rbac_enabled: false, config: { path: rootB.dir } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    assert.equal((await beta('POST', '/api/files/save-text', { token, body: { path: '/Bee/b.txt', content: 'tenant b' } })).status, 200);
    const link = await beta('POST', '/api/files/share', { token, body: { path: '/Bee/b.txt' } });
    assert.equal(link.status, 200, JSON.stringify(link.body));
    assert.equal((await beta('GET', `/api/files/share/${link.body.token}`)).status, 200);
    assert.equal((await home('GET', `/t/beta/api/files/share/${link.body.token}`)).status, 200);
    const onA = await home('GET', `/api/files/share/${link.body.token}`);
    assert.equal(onA.status, 404);
    assert.equal(onA.body.error, 'not_found');
    assert.equal((await home('GET', `/s/${link.body.token}`)).status, 404, 'the link page too');
  });

  test('an unknown prefix is 404 not_found; a host that is no tenant’s is tenant 1', async () => {
    const r = await home('GET', '/t/nobody/api/auth/me');
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'not_found');
    const a = await signIn(onHost(s, 'other.example.test'));
    assert.equal(a.body.user.id, samA);
  });
});
