/**
 * Replication in multi-tenant mode (docs/tenants.md, "Step 1: replication, NFS exports, document server"):
 * targets, rules and failures are a tenant's. Tenant 2's admin makes a target and a rule; tenant 1's admin meets
 * them as missing ones (404 `not_found` to read, change or delete; "no such replication target" to link), may use
 * the same target name, and lists none of them. The installation's report, audit and drill are the platform
 * operator's (403 `supertenant_only` to a tenant admin).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { addTenantRow, onHost, type HostAnswer } from '../helpers/tenants';

const HOST = 'two.example.test';
const ADMIN = { email: 'two@example.test', password: 'two-password-1' };
const MISSING = 987654321;

describe('tenants: replication targets, rules and failures', () => {
  let s: TestServer;
  let operator: string;
  let two: ReturnType<typeof onHost>;
  let token: string;
  let target: number;
  let rule: number;
  const dirs: Array<{ dir: string; cleanup: () => void }> = [];
  const dir = () => {
    const d = tempDir('filedock-tenant-repl-');
    dirs.push(d);
    return d.dir;
  };

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    operator = await s.login();
    const id = await addTenantRow(s, 'two', [HOST]);
    await s.server.services.auth.users.create({ tenant_id: id }, { ...ADMIN, role: 'admin' });
    two = onHost(s, HOST);
    token = (await two('POST', '/api/auth/login', { body: ADMIN })).body.token as string;
    const made = await two('POST', '/api/admin/replication-targets', { token, body: { name: 'Backup', driver: 'local', config: { path: dir() } } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    target = made.body.id as number;
    const r = await two('POST', '/api/admin/replica/rules', { token, body: { path_pattern: 'Docs/tmp/**', mode: 'skip' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.tenant_id, undefined, 'no tenant_id in the answer');
    rule = r.body.id as number;
  });
  after(async () => {
    await s?.close();
    for (const d of dirs) d.cleanup();
  });

  const code = (r: HostAnswer) => `${r.status} ${r.body?.error ?? ''}`;

  test('another tenant’s target and rule answer like missing ones, and are not listed', async () => {
    const asOperator = (method: string, path: string, body?: unknown) => s.api(method, path, { token: operator, body }) as Promise<HostAnswer>;
    for (const [method, path, body] of [
      ['GET', '/api/admin/replication-targets/:id', undefined],
      ['PATCH', '/api/admin/replication-targets/:id', { enabled: false }],
      ['DELETE', '/api/admin/replication-targets/:id', undefined],
      ['PATCH', '/api/admin/replica/rules/:rule', { mode: 'mirror' }],
      ['DELETE', '/api/admin/replica/rules/:rule', undefined],
    ] as const) {
      const theirs = await asOperator(method, path.replace(':id', String(target)).replace(':rule', String(rule)), body);
      const missing = await asOperator(method, path.replace(':id', String(MISSING)).replace(':rule', String(MISSING)), body);
      assert.equal(code(theirs), '404 not_found', `${method} ${path}: ${JSON.stringify(theirs.body)}`);
      assert.equal(code(theirs), code(missing));
    }
    assert.deepEqual((await asOperator('GET', '/api/admin/replication-targets')).body.targets, []);
    assert.deepEqual((await asOperator('GET', '/api/admin/replica/rules')).body.rules, []);
    const own = await two('GET', '/api/admin/replication-targets', { token });
    assert.deepEqual(
      own.body.targets.map((t: { id: number; enabled: boolean }) => [t.id, t.enabled]),
      [[target, true]],
      'unchanged',
    );
    assert.deepEqual(
      (await two('GET', '/api/admin/replica/rules', { token })).body.rules.map((r: { id: number; mode: string }) => [r.id, r.mode]),
      [[rule, 'skip']],
    );
  });

  test('a storage links only a target of its tenant: another tenant’s id is "no such replication target"', async () => {
    const body = (replica_target_id: number) => ({ name: `Docs-${replica_target_id}`, driver: 'local', config: { path: dir() }, replica_target_id });
    const theirs = await s.api('POST', '/api/admin/storages', { token: operator, body: body(target) });
    const missing = await s.api('POST', '/api/admin/storages', { token: operator, body: body(MISSING) });
    assert.equal(theirs.status, 400, JSON.stringify(theirs.body));
    assert.deepEqual([theirs.body.error, theirs.body.details], [missing.body.error, missing.body.details]);
    assert.equal(theirs.body.details.field, 'replica_target_id');
    const mine = await two('POST', '/api/admin/storages', { token, body: body(target) });
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(mine.body.replica_target_id, target);
  });

  test('the same target name in two tenants; the installation’s report, audit and drill are the operator’s', async () => {
    const same = await s.api('POST', '/api/admin/replication-targets', { token: operator, body: { name: 'Backup', driver: 'local', config: { path: dir() } } });
    assert.equal(same.status, 200, JSON.stringify(same.body));
    assert.equal(
      code(await two('POST', '/api/admin/replication-targets', { token, body: { name: 'Backup', driver: 'local', config: { path: dir() } } })),
      '409 name_taken',
    );
    for (const path of ['/api/admin/replica/report', '/api/admin/replica/audit', '/api/admin/replica/drill'])
      assert.equal(code(await two('GET', path, { token })), '403 supertenant_only', path);
    const report = await s.api('POST', '/api/admin/replica/report/run-now', { token: operator });
    assert.equal(report.status, 200, JSON.stringify(report.body));
    assert.deepEqual(
      report.body.targets.map((t: { name: string; storages: string[] }) => [t.name, t.storages]).sort(),
      [
        ['Backup', []],
        ['Backup', [`Docs-${target}`]],
      ],
      'the operator’s report is every tenant’s',
    );
  });
});
