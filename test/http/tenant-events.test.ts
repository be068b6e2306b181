/**
 * Multi-tenant mode, the events cluster (docs/tenants.md, docs/events.md): an event belongs to the tenant of
 * its change. Two tenants, each with an admin, a storage named alike and a webhook target: a file saved in one
 * tenant reaches only that tenant's target and delivery log; a person's action lands in their tenant's audit
 * log and not in the other's; each admin sees and changes only their tenant's targets.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { addTenantRow, onHost } from '../helpers/tenants';

const BETA = 'beta.example.test';

describe('tenants: events, webhooks and audit stay in their tenant', () => {
  let s: TestServer;
  let roots: Array<{ dir: string; cleanup: () => void }>;
  let hook: Server;
  let hookUrl: string;
  const got: Array<{ path: string; event: string; node: string }> = [];
  let home: ReturnType<typeof onHost>;
  let beta: ReturnType<typeof onHost>;
  let adminA: string;
  let adminB: string;

  before(async () => {
    roots = [tempDir('filedock-tev-a-'), tempDir('filedock-tev-b-')];
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const b = JSON.parse(body);
        got.push({ path: req.url!, event: b.event, node: b.data.node?.path ?? '' });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    const b = { tenant_id: await addTenantRow(s, 'beta', [BETA]) };
    await s.server.services.auth.users.create(b, { email: 'boss@beta.test', password: 'beta-admin-password', role: 'admin' });
    home = onHost(s, '127.0.0.1');
    beta = onHost(s, BETA);
    adminA = await s.login();
    adminB = (await beta('POST', '/api/auth/login', { body: { email: 'boss@beta.test', password: 'beta-admin-password' } })).body.token;
    for (const [on, token, root] of [
      [home, adminA, roots[0].dir],
      [beta, adminB, roots[1].dir],
    ] as const) {
      const made = await on('POST', '/api/admin/storages', { token, body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root } } });
      assert.equal(made.status, 200, JSON.stringify(made.body));
    }
  });
  after(async () => {
    await s.close();
    await new Promise((r) => hook.close(r));
    for (const r of roots) r.cleanup();
  });

  test("a tenant's webhook target hears only its tenant's events; each admin sees only their targets and deliveries", async () => {
    const a = await home('POST', '/api/admin/webhooks', { token: adminA, body: { url: `${hookUrl}/a`, events: ['file.uploaded'] } });
    const b = await beta('POST', '/api/admin/webhooks', { token: adminB, body: { url: `${hookUrl}/b`, events: ['file.uploaded'] } });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(b.status, 200, JSON.stringify(b.body));
    const targets = async (on: typeof home, token: string) => (await on('GET', '/api/admin/webhooks', { token })).body.targets.map((t: any) => t.url);
    assert.deepEqual(await targets(home, adminA), [`${hookUrl}/a`]);
    assert.deepEqual(await targets(beta, adminB), [`${hookUrl}/b`]);
    // Another tenant's target is not found, so neither changed nor removed.
    assert.equal((await home('PATCH', `/api/admin/webhooks/${b.body.id}`, { token: adminA, body: { enabled: false } })).status, 404);
    assert.equal((await home('DELETE', `/api/admin/webhooks/${b.body.id}`, { token: adminA })).status, 404);

    assert.equal((await home('POST', '/api/files/save-text', { token: adminA, body: { path: '/Docs/of-a.txt', content: 'a' } })).status, 200);
    assert.equal((await beta('POST', '/api/files/save-text', { token: adminB, body: { path: '/Docs/of-b.txt', content: 'b' } })).status, 200);
    for (let i = 0; i < 400 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    await s.server.queue.idle(5000);
    assert.deepEqual(got.map((g) => [g.path, g.event, g.node]).sort(), [
      ['/a', 'file.uploaded', 'of-a.txt'],
      ['/b', 'file.uploaded', 'of-b.txt'],
    ]);
    const log = async (on: typeof home, token: string) =>
      (await on('GET', '/api/admin/webhooks/deliveries', { token })).body.deliveries.map((d: any) => [d.target_id, d.status]);
    assert.deepEqual(await log(home, adminA), [[a.body.id, 'delivered']]);
    assert.deepEqual(await log(beta, adminB), [[b.body.id, 'delivered']]);
  });

  test("a tenant-2 person's action lands in tenant 2's audit log, not in tenant 1's", async () => {
    const made = await beta('POST', '/api/admin/users', { token: adminB, body: { email: 'new@beta.test', username: 'newb', password: 'new-beta-password-1' } });
    assert.ok(made.status === 200 || made.status === 201, JSON.stringify(made.body));
    const audit = async (on: typeof home, token: string) =>
      (await on('GET', '/api/admin/audit?action=user.create', { token })).body.events.map((e: any) => [e.user_email, e.meta.email]);
    // Newest first: the admin's creation of a person, then the set-up's creation of the admin (no actor), both of tenant 2.
    assert.deepEqual(await audit(beta, adminB), [
      ['boss@beta.test', 'new@beta.test'],
      [null, 'boss@beta.test'],
    ]);
    assert.deepEqual(
      (await audit(home, adminA)).filter(([, email]: string[]) => email.endsWith('@beta.test')),
      [],
      "tenant 1's log does not hold it",
    );
    // The sign-ins were audited in each person's tenant too.
    const logins = async (on: typeof home, token: string) =>
      (await on('GET', '/api/admin/audit?action=auth.login', { token })).body.events.map((e: any) => e.user_email);
    assert.ok((await logins(beta, adminB)).includes('boss@beta.test'));
    assert.ok(!(await logins(home, adminA)).includes('boss@beta.test'));
  });
});
