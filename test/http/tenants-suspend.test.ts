/**
 * Multi-tenant mode, suspension (docs/tenants.md, "Suspending"): the operator suspends a tenant and its
 * session (cookie and bearer), API key and public link stop at once (`unauthenticated`; the link answers
 * as a missing one), its sign-in is refused; resumed, the same credentials and link work again. Another
 * tenant is untouched.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { onHost } from '../helpers/tenants';

const HOST = 'suspend.example.test';
const ADMIN_B = { email: 'boss@suspend.test', password: 'suspend-password-1' };

describe('tenants: suspension', () => {
  let s: TestServer;
  let root: { dir: string; cleanup: () => void };
  let operator: string;

  before(async () => {
    root = tempDir('filedock-tenant-suspend-');
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    operator = await s.login();
  });
  after(async () => {
    await s.close();
    root.cleanup();
  });

  test('a suspended tenant’s session, key and link stop at once; resumed, they work again', async () => {
    const made = await s.api('POST', '/api/platform/tenants', {
      token: operator,
      body: { slug: 'susp', name: 'Suspended soon', hostnames: [HOST], admin: ADMIN_B },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = made.body.tenant.id;
    const on = onHost(s, HOST);
    const signed = await on('POST', '/api/auth/login', { body: ADMIN_B });
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const token = signed.body.token;
    assert.ok(signed.cookie);
    const key = await on('POST', '/api/auth/keys', { token, body: { name: 'k', verbs: ['files:read'] } });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    assert.equal(
      (await on('POST', '/api/admin/storages', { token, body: { name: 'S', driver: 'local', rbac_enabled: false, config: { path: root.dir } } })).status,
      200,
    );
    assert.equal((await on('POST', '/api/files/save-text', { token, body: { path: '/S/a.txt', content: 'x' } })).status, 200);
    const link = await on('POST', '/api/files/share', { token, body: { path: '/S/a.txt' } });
    assert.equal(link.status, 200, JSON.stringify(link.body));

    const works = async () => {
      assert.equal((await on('GET', '/api/auth/me', { token })).status, 200, 'bearer session');
      assert.equal((await on('GET', '/api/auth/me', { cookie: signed.cookie })).status, 200, 'cookie session');
      assert.equal((await on('GET', '/api/auth/me', { token: key.body.token })).status, 200, 'key');
      assert.equal((await on('GET', `/api/files/share/${link.body.token}`)).status, 200, 'link');
    };
    await works();

    const suspended = await s.api('PATCH', `/api/platform/tenants/${id}`, { token: operator, body: { status: 'suspended' } });
    assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
    for (const [what, r] of [
      ['bearer session', await on('GET', '/api/auth/me', { token })],
      ['cookie session', await on('GET', '/api/auth/me', { cookie: signed.cookie })],
      ['key', await on('GET', '/api/auth/me', { token: key.body.token })],
      ['prefix', await s.api('GET', '/t/susp/api/auth/me', { token })],
      ['sign-in', await on('POST', '/api/auth/login', { body: ADMIN_B })],
    ] as const) {
      assert.equal(r.status, 401, `${what}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error, 'unauthenticated', what);
    }
    for (const r of [await on('GET', `/api/files/share/${link.body.token}`), await on('GET', `/s/${link.body.token}`)])
      assert.equal(r.status, 404, 'the link answers as a missing one');
    assert.equal((await s.api('GET', '/api/auth/me', { token: operator })).status, 200, 'tenant 1 is untouched');

    assert.equal((await s.api('PATCH', `/api/platform/tenants/${id}`, { token: operator, body: { status: 'active' } })).status, 200);
    await works();
  });
});
