/**
 * Roles and permissions on a real server: the built-in matrix (a viewer
 * reads and downloads, never writes or shares), custom roles and a person's
 * exceptions in the spec's order, groups in /api/auth/me and as grant
 * targets, the account check's probe budget, and sign-up.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const from = (ip: string) => ({ 'x-forwarded-for': ip });

describe('roles, permissions, account checks and sign-up', () => {
  let s: TestServer;
  let admin: string;
  let cleanup: () => void;
  const users: Record<string, { id: number; token: string }> = {};

  const make = async (name: string, role: string, groups: string[] = []) => {
    const r = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: `${name}@example.test`, username: name, password: `${name}-password-1`, role, groups },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    users[name] = { id: r.body.user.id, token: await s.login(`${name}@example.test`, `${name}-password-1`) };
  };
  const mkdir = (who: string, path: string) => s.api('POST', '/api/files/mkdir', { token: users[who].token, body: { path } });
  const share = (who: string, path: string) => s.api('POST', '/api/files/share', { token: users[who].token, body: { path } });

  before(async () => {
    let root: string;
    ({ dir: root, cleanup } = tempDir('filedock-roles-'));
    mkdirSync(join(root, 'Team'));
    writeFileSync(join(root, 'Team/notes.txt'), 'notes');
    // The failure window outlasts a password hash (scrypt N=2^17: up to ~1.5 s on a busy machine).
    s = await startTestServer({ SERVICE_LOGIN_MAX_ATTEMPTS: '3', SERVICE_LOGIN_LOCK: '5s' });
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Shared', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    await make('vic', 'viewer');
    await make('uma', 'user', ['design']);
    await make('ron', 'user');
    await s.api('GET', '/api/files/manager?path=/Shared/Team', { token: admin });
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('the catalogue lists every permission, the key verbs and the built-in matrix', async () => {
    const r = await s.api('GET', '/api/admin/permissions', { token: admin });
    assert.equal(r.status, 200);
    const ids = r.body.permissions.map((p: any) => p.id);
    for (const p of ['files:read', 'files:write', 'shares:write', 'ai.assistant', 'ai.use']) assert.ok(ids.includes(p), p);
    assert.deepEqual(r.body.verbs.map((v: any) => v.id).sort(), ['admin', 'ai.use', 'files:read', 'files:write', 'shares:write']);
    assert.deepEqual(r.body.matrix.viewer, { 'files:read': true, 'files:write': false, 'shares:write': false, 'ai.assistant': true, 'ai.use': true });
    assert.equal((await s.api('GET', '/api/admin/permissions', { token: users.uma.token })).status, 403);
  });

  test('a viewer reads and downloads but neither writes nor shares', async () => {
    const raw = await s.api('GET', '/api/files/raw?path=' + encodeURIComponent('/Shared/Team/notes.txt'), { token: users.vic.token });
    assert.deepEqual([raw.status, raw.body], [200, 'notes']);
    assert.equal((await mkdir('vic', '/Shared/Team/v')).status, 403);
    assert.equal((await share('vic', '/Shared/Team/notes.txt')).status, 403);
  });

  test("a custom role turns a permission off for its members; a person's exception wins over the role", async () => {
    const bad = await s.api('POST', '/api/admin/roles', { token: admin, body: { name: 'No links', permissions: { 'shares:fly': false } } });
    assert.deepEqual([bad.status, bad.body.details?.permission], [400, 'shares:fly']);
    const builtIn = await s.api('POST', '/api/admin/roles', { token: admin, body: { name: 'Viewer', permissions: {} } });
    assert.equal(builtIn.body.error, 'name_taken');
    const role = await s.api('POST', '/api/admin/roles', { token: admin, body: { name: 'No links', permissions: { 'shares:write': false } } });
    assert.equal(role.status, 201, JSON.stringify(role.body));
    assert.equal((await share('uma', '/Shared/Team/notes.txt')).status, 200, 'before the role');
    const set = await s.api('PATCH', `/api/admin/users/${users.uma.id}`, { token: admin, body: { custom_role_id: role.body.role.id } });
    assert.equal(set.body.user.custom_role_id, role.body.role.id);
    const refused = await share('uma', '/Shared/Team/notes.txt');
    assert.equal(refused.status, 403);
    assert.deepEqual([refused.body.error, refused.body.details.permission, refused.body.details.source], ['permission_denied', 'shares:write', 'role']);
    assert.equal((await mkdir('uma', '/Shared/Team/uma')).status, 200, 'the role leaves writes alone');
    assert.equal((await s.api('GET', '/api/admin/roles', { token: admin })).body.roles[0].members, 1);

    // Exception over the role: uma may share again; ron loses writes by his own exception.
    await s.api('PUT', `/api/admin/users/${users.uma.id}/permissions`, { token: admin, body: { permissions: { 'shares:write': true } } });
    assert.equal((await share('uma', '/Shared/Team/notes.txt')).status, 200);
    const ex = await s.api('PUT', `/api/admin/users/${users.ron.id}/permissions`, { token: admin, body: { permissions: { 'files:write': false } } });
    assert.deepEqual(ex.body.permissions, { 'files:write': false });
    const w = await mkdir('ron', '/Shared/Team/ron');
    assert.deepEqual([w.status, w.body.details?.permission], [403, 'files:write']);
    const listing = await s.api('GET', '/api/files/manager?path=/Shared/Team', { token: users.ron.token });
    assert.ok(
      listing.body.entries.every((e: any) => e.perm === 'viewer'),
      'his listing shows it',
    );

    // The role changes apply at once; deleting it returns its members to their built-in role.
    await s.api('PUT', `/api/admin/users/${users.uma.id}/permissions`, { token: admin, body: { permissions: {} } });
    await s.api('PATCH', `/api/admin/roles/${role.body.role.id}`, { token: admin, body: { permissions: { 'shares:write': false, 'files:write': false } } });
    assert.equal((await mkdir('uma', '/Shared/Team/uma2')).status, 403);
    await s.api('DELETE', `/api/admin/roles/${role.body.role.id}`, { token: admin });
    assert.equal((await mkdir('uma', '/Shared/Team/uma2')).status, 200);
    assert.equal((await s.api('GET', `/api/admin/users/${users.uma.id}`, { token: admin })).body.user.custom_role_id, null);
  });

  test('groups show in /api/auth/me and /api/admin/groups, and a grant to a group opens a storage to its members', async () => {
    assert.deepEqual((await s.api('GET', '/api/auth/me', { token: users.uma.token })).body.user.groups, ['design']);
    const groups = await s.api('GET', '/api/admin/groups', { token: admin });
    assert.deepEqual(groups.body.groups, [{ name: 'design', members: [{ id: users.uma.id, email: 'uma@example.test', username: 'uma' }] }]);
    const st = (await s.api('GET', '/api/admin/storages', { token: admin })).body;
    const shared = (st.storages ?? st).find((x: any) => x.name === 'Shared');
    const grant = await s.api('PUT', `/api/admin/storages/${shared.id}/grants`, { token: admin, body: { grants: [{ group: 'design', level: 'viewer' }] } });
    assert.equal(grant.status, 200, JSON.stringify(grant.body));
    const rbac = await s.api('PATCH', `/api/admin/storages/${shared.id}`, { token: admin, body: { rbac_enabled: true } });
    assert.equal(rbac.status, 200, JSON.stringify(rbac.body));
    assert.equal((await s.api('GET', '/api/files/manager?path=/Shared', { token: users.uma.token })).status, 200);
    // Ron is not in the group: he only passes through on the way to his home folder (Shared is the first storage).
    const ron = await s.api('GET', '/api/files/manager?path=/Shared', { token: users.ron.token });
    assert.deepEqual(
      ron.body.entries.map((e: { name: string }) => e.name),
      ['Users'],
    );
    assert.equal(
      (await s.api('GET', '/api/files/manager?path=/Shared/Users', { token: users.ron.token })).body.entries.map((e: { name: string }) => e.name).join(),
      'ron',
    );
    await s.api('PATCH', `/api/admin/storages/${shared.id}`, { token: admin, body: { rbac_enabled: false } });
  });

  test("account check answers the field codes and spends from the address's probe budget; an admin is not counted", async () => {
    const check = (token: string, body: Record<string, unknown>, ip: string) => s.api('POST', '/api/auth/account/check', { token, body, headers: from(ip) });
    assert.equal((await check(users.ron.token, { email: 'uma@example.test' }, '10.9.0.1')).body.error, 'email_taken');
    assert.equal((await check(users.ron.token, { email: 'not an address' }, '10.9.0.1')).body.error, 'email_invalid');
    assert.equal((await check(users.ron.token, { username: 'uma' }, '10.9.0.1')).body.error, 'username_taken');
    assert.equal((await check(users.ron.token, { username: 'x' }, '10.9.0.1')).body.error, 'username_invalid');
    assert.equal((await check(users.ron.token, { email: '' }, '10.9.0.1')).body.error, 'email_required');
    const ok = await check(users.ron.token, { email: 'free@example.test' }, '10.9.0.1');
    assert.deepEqual([ok.status, ok.body], [200, { ok: true }]);
    // Sign-in lets an address fail 2 × SERVICE_LOGIN_MAX_ATTEMPTS (6) times per lock; checks get no more.
    const limited = await check(users.ron.token, { email: 'next@example.test' }, '10.9.0.1');
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.body.details.retry_after) > 0);
    assert.equal((await check(users.ron.token, { email: 'next@example.test' }, '10.9.0.2')).status, 200, 'another address has its own budget');
    for (let i = 0; i < 10; i++) assert.equal((await check(admin, { email: `a${i}@example.test` }, '10.9.0.3')).status, 200);
  });

  test('sign-up is off by default; when on it makes a user account and signs it in, with the same checks and budget', async () => {
    const body = { email: 'new@example.test', password: 'new-password-1' };
    const off = await s.api('POST', '/api/auth/signup', { body, headers: from('10.8.0.1') });
    assert.deepEqual([off.status, off.body.error], [403, 'forbidden']);
    assert.equal((await s.api('GET', '/api/capabilities')).body.auth.allow_signup, false);
    assert.equal((await s.api('PATCH', '/api/admin/auth/settings', { token: admin, body: { allow_signup: true } })).status, 200);
    assert.equal((await s.api('GET', '/api/capabilities')).body.auth.allow_signup, true);
    const made = await s.api('POST', '/api/auth/signup', { body, headers: from('10.8.0.1') });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.user.role, 'user');
    assert.match(made.headers.get('set-cookie') ?? '', /service_session=/);
    assert.equal((await s.api('GET', '/api/auth/me', { token: made.body.token })).body.user.email, body.email);
    const again = await s.api('POST', '/api/auth/signup', { body, headers: from('10.8.0.1') });
    assert.equal(again.body.error, 'email_taken');
    const weak = await s.api('POST', '/api/auth/signup', { body: { email: 'weak@example.test', password: '1' }, headers: from('10.8.0.1') });
    assert.deepEqual([weak.status, weak.body.details?.field], [400, 'password']);
    const smuggled = await s.api('POST', '/api/auth/signup', { body: { ...body, email: 'boss@example.test', role: 'admin' }, headers: from('10.8.0.1') });
    assert.equal(smuggled.status, 400, 'no role field');
    for (let i = 0; i < 3; i++) await s.api('POST', '/api/auth/signup', { body: { email: 'new@example.test', password: 'x' }, headers: from('10.8.0.1') });
    assert.equal(
      (await s.api('POST', '/api/auth/signup', { body: { email: 'late@example.test', password: 'late-password-1' }, headers: from('10.8.0.1') })).status,
      429,
    );
    await s.api('PATCH', '/api/admin/auth/settings', { token: admin, body: { allow_signup: false } });
  });
});
