/**
 * `--tenant <slug>` (docs/tenants.md, "CLI"): `service user` and `service storage` work in the tenant the slug
 * names (the same e-mail and storage name in two tenants are two), tenant 1 without it; an unknown slug is a
 * usage error, and a command that touches no tenant's data refuses the option.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { SERVICE_CLI } from '../helpers/child-server';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

describe('service CLI: --tenant', () => {
  let s: TestServer;
  const data = tempDir('filedock-cli-tenant-');
  let env: Record<string, string>;
  const run = (args: string[]) =>
    spawnSync(process.execPath, [...SERVICE_CLI, ...args], { env: { ...process.env, SERVICE_UPDATE_CHECK: '0', ...env }, encoding: 'utf8', timeout: 120_000 });

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1', SERVICE_DATA_DIR: data.dir });
    const url = s.server.services.config.databaseUrl;
    env = { SERVICE_DATA_DIR: data.dir, ...(url ? { SERVICE_DATABASE_URL: url } : {}) };
    const made = await s.api('POST', '/api/platform/tenants', {
      token: await s.login(),
      body: { slug: 'acme', name: 'Acme', admin: { email: 'boss@acme.test', password: 'acme-password-1' } },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
  });
  after(async () => {
    await s.close();
    data.cleanup();
  });

  test('user and storage work in the tenant the slug names', async () => {
    const same = ['user', 'add', '--email', 'same@example.test'];
    const inAcme = run([...same, '--tenant', 'acme', '--password', 'acme-side-pw-1']);
    assert.equal(inAcme.status, 0, inAcme.stderr);
    const inOne = run([...same, '--password', 'one-side-pw-1']);
    assert.equal(inOne.status, 0, `the same e-mail in tenant 1 is another account: ${inOne.stderr}`);
    const emails = (args: string[]) => (JSON.parse(run(['user', 'list', '--json', ...args]).stdout) as { email: string }[]).map((u) => u.email).sort();
    assert.deepEqual(emails(['--tenant', 'acme']), ['boss@acme.test', 'same@example.test']);
    assert.ok(!emails([]).includes('boss@acme.test'), "tenant 1's list holds none of acme's people");
    const login = (path: string, password: string) => s.api('POST', `${path}/api/auth/login`, { body: { email: 'same@example.test', password } });
    assert.equal((await login('/t/acme', 'acme-side-pw-1')).status, 200, 'signs in to acme with the password given there');
    assert.equal((await login('', 'acme-side-pw-1')).status, 401, "that password is not tenant 1's account's");
    assert.equal(run(['user', 'passwd', '--tenant', 'acme', '--email', 'same@example.test', '--password', 'acme-changed-1']).status, 0);
    assert.equal((await login('/t/acme', 'acme-changed-1')).status, 200);
    assert.equal((await login('', 'one-side-pw-1')).status, 200, "tenant 1's password is untouched");

    const root = join(data.dir, 'acme-files');
    mkdirSync(root);
    const add = run(['storage', 'add', '--tenant', 'acme', '--name', 'Box', '--driver', 'local', '--config', JSON.stringify({ path: root })]);
    assert.equal(add.status, 0, add.stderr);
    assert.match(run(['storage', 'list', '--tenant', 'acme']).stdout, /Box\s+local/);
    assert.doesNotMatch(run(['storage', 'list']).stdout, /Box/);
    assert.notEqual(run(['storage', 'remove', '--name', 'Box']).status, 0, 'tenant 1 has no Box to remove');
    assert.equal(run(['storage', 'remove', '--tenant', 'acme', '--name', 'Box']).status, 0);
  });

  test('an unknown slug is a usage error; a command without tenant data refuses the option', () => {
    const unknown = run(['user', 'list', '--tenant', 'nosuch']);
    assert.equal(unknown.status, 64);
    assert.match(unknown.stderr, /no tenant "nosuch"/);
    assert.equal(run(['storage', 'list', '--tenant', 'nosuch']).status, 64);
    const platform = run(['backup', 'list', '--tenant', 'acme']);
    assert.equal(platform.status, 64);
    assert.match(platform.stderr, /Unknown option '--tenant'/);
  });
});
