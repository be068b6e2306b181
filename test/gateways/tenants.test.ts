/**
 * The gateways in multi-tenant mode (docs/tenants.md, "Selecting a tenant"): `name@slug` signs in to that
 * tenant, a plain name to tenant 1 (or, on WebDAV, to the tenant of the host or `/t/<slug>/` prefix); an
 * unknown or suspended tenant is refused like a wrong password; a key token and an S3 access key are found in
 * their own tenant; the throttle locks a name in one tenant only; a suspension refuses the next verb of a
 * session already open. The same e-mail is an account in both tenants, with another password.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { onHost } from '../helpers/tenants';
import type { GatewayCore } from '../../server/gateways';
import { actorTenant, type Actor } from '../../server/auth';

const HOST = 'acme.example.test';
const BOSS = { email: 'boss@acme.test', password: 'acme-password-1' };
/** The same e-mail in tenant 1, with its own password. */
const BOSS_ONE = { email: BOSS.email, password: 'one-password-1' };
const req = (ip: string) => ({ ip, ua: 'test' });
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'signed in',
    (e) => e.code as string,
  );
const roots = async (core: GatewayCore, a: Actor) => {
  const out: string[] = [];
  for await (const e of core.tree(a, 'webdav').list('/')) out.push(e.name);
  return out;
};

/** A PROPFIND of `/dav/` (depth 1) as Basic `user:password`, to `host` or through `path`'s prefix. */
const propfind = (s: TestServer, o: { host?: string; path?: string; user: string; password: string }) =>
  dav(s, { ...o, method: 'PROPFIND', headers: { depth: '1' } });

/** A WebDAV request as Basic `user:password`, to `host` or to `path` (default `/dav/`). */
function dav(
  s: TestServer,
  o: { method: string; host?: string; path?: string; user: string; password: string; headers?: Record<string, string> },
): Promise<{ status: number; body: string }> {
  const port = new URL(s.url).port;
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${o.user}:${o.password}`).toString('base64')}`,
    ...o.headers,
    ...(o.host ? { host: `${o.host}:${port}` } : {}),
  };
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, method: o.method, path: o.path ?? '/dav/', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end();
  });
}

describe('gateways: tenants', () => {
  let s: TestServer;
  let core: GatewayCore;
  let operator: string;
  let tenantId: number;
  let keyToken: string;
  let bossToken: string;
  const one = tempDir('filedock-gw-tenant-1-');
  const two = tempDir('filedock-gw-tenant-2-');

  before(async () => {
    writeFileSync(join(one.dir, 'one.txt'), '1');
    writeFileSync(join(two.dir, 'two.txt'), '2');
    // A tenant's host name is no loopback address: plain HTTP is allowed here by name.
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1', SERVICE_LOGIN_MAX_ATTEMPTS: '3', SERVICE_LOGIN_LOCK: '60s', SERVICE_WEBDAV_ALLOW_HTTP: '1' });
    core = s.server.services.gateways;
    operator = await s.login();
    const made = await s.api('POST', '/api/platform/tenants', { token: operator, body: { slug: 'acme', name: 'Acme', hostnames: [HOST], admin: BOSS } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    tenantId = made.body.tenant.id;
    const on = onHost(s, HOST);
    const boss = (await on('POST', '/api/auth/login', { body: BOSS })).body.token;
    bossToken = boss;
    const storage = { driver: 'local', rbac_enabled: false };
    assert.equal((await on('POST', '/api/admin/storages', { token: boss, body: { ...storage, name: 'Two', config: { path: two.dir } } })).status, 200);
    assert.equal((await s.api('POST', '/api/admin/storages', { token: operator, body: { ...storage, name: 'One', config: { path: one.dir } } })).status, 200);
    assert.equal((await s.api('POST', '/api/admin/users', { token: operator, body: { ...BOSS_ONE, role: 'admin' } })).status, 200);
    const key = await on('POST', '/api/auth/keys', { token: boss, body: { name: 'gw', verbs: ['files:read'] } });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    keyToken = key.body.token;
  });
  after(async () => {
    await s.close();
    one.cleanup();
    two.cleanup();
  });

  test('name@slug lands in that tenant, a plain name in tenant 1; an unknown slug is a wrong password', async () => {
    const acme = await core.auth.signIn(`${BOSS.email}@acme`, BOSS.password, req('10.2.0.1'), 'ftp');
    assert.equal(actorTenant(acme).tenant_id, tenantId);
    assert.deepEqual(await roots(core, acme), ['Two']);
    const plain = await core.auth.signIn(BOSS_ONE.email, BOSS_ONE.password, req('10.2.0.1'), 'sftp');
    assert.equal(actorTenant(plain).tenant_id, 1);
    assert.deepEqual(await roots(core, plain), ['One']);
    // Each tenant's password opens only its own account.
    assert.equal(await codeOf(core.auth.signIn(BOSS.email, BOSS.password, req('10.2.0.2'), 'ftp')), 'invalid_credentials');
    assert.equal(await codeOf(core.auth.signIn(`${BOSS.email}@acme`, BOSS_ONE.password, req('10.2.0.2'), 'ftp')), 'invalid_credentials');
    assert.equal(await codeOf(core.auth.signIn(`${BOSS.email}@nosuch`, BOSS.password, req('10.2.0.3'), 'ftp')), 'invalid_credentials');
  });

  test('WebDAV: the host or prefix selects the tenant of a plain name; name@slug works anywhere', async () => {
    const byHost = await propfind(s, { host: HOST, user: BOSS.email, password: BOSS.password });
    assert.equal(byHost.status, 207, byHost.body);
    assert.match(byHost.body, /Two/);
    assert.doesNotMatch(byHost.body, /One/);
    const byPrefix = await propfind(s, { path: '/t/acme/dav/', user: BOSS.email, password: BOSS.password });
    assert.equal(byPrefix.status, 207, byPrefix.body);
    assert.match(byPrefix.body, /Two/);
    const bySlug = await propfind(s, { user: `${BOSS.email}@acme`, password: BOSS.password });
    assert.equal(bySlug.status, 207, bySlug.body);
    assert.match(bySlug.body, /Two/);
    const mine = await propfind(s, { user: BOSS_ONE.email, password: BOSS_ONE.password });
    assert.equal(mine.status, 207, mine.body);
    assert.match(mine.body, /One/);
    assert.doesNotMatch(mine.body, /Two/);
    assert.equal((await propfind(s, { host: HOST, user: BOSS.email, password: BOSS_ONE.password })).status, 401);
  });

  test('WebDAV through the prefix: hrefs carry it, and a Destination must carry it too', async () => {
    const who = { user: BOSS.email, password: BOSS.password };
    const listed = await propfind(s, { path: '/t/acme/dav/Two/', ...who });
    assert.equal(listed.status, 207, listed.body);
    const hrefs = [...listed.body.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]);
    assert.deepEqual(hrefs.sort(), ['/t/acme/dav/Two/', '/t/acme/dav/Two/two.txt'], 'a client following these stays in the tenant');
    const port = new URL(s.url).port;
    const move = (destination: string) => dav(s, { method: 'MOVE', path: '/t/acme/dav/Two/two.txt', ...who, headers: { destination, overwrite: 'F' } });
    assert.equal((await move(`http://127.0.0.1:${port}/dav/Two/moved.txt`)).status, 502, 'a destination outside the prefix is another tree');
    assert.equal((await move(`http://127.0.0.1:${port}/t/acme/dav/Two/moved.txt`)).status, 201);
    assert.equal((await propfind(s, { path: '/t/acme/dav/Two/moved.txt', ...who })).status, 207);
    assert.equal(
      (await dav(s, { method: 'MOVE', path: '/t/acme/dav/Two/moved.txt', ...who, headers: { destination: '/t/acme/dav/Two/two.txt' } })).status,
      201,
    );
  });

  test('a key token and an S3 access key are found in their own tenant', async () => {
    const byKey = await core.auth.signIn('anyone', keyToken, req('10.2.1.1'), 'webdav');
    assert.equal(actorTenant(byKey).tenant_id, tenantId);
    assert.deepEqual(await roots(core, byKey), ['Two']);
    const s3 = await core.auth.s3Key(`fdk_${/^fdk_(\d+)_/.exec(keyToken)![1]}`, req('10.2.1.1'));
    assert.ok(s3, 'the tenant-2 key is found');
    assert.equal(actorTenant(s3.actor).tenant_id, tenantId);
    assert.deepEqual(await roots(core, s3.actor), ['Two']);
  });

  test('the throttle locks a name in one tenant only', async () => {
    for (let i = 0; i < 3; i++) await codeOf(core.auth.signIn(`${BOSS.email}@acme`, `wrong-${i}-password`, req(`10.2.2.${i}`), 'ftp'));
    assert.equal(await codeOf(core.auth.signIn(`${BOSS.email}@acme`, BOSS.password, req('10.2.2.9'), 'ftp')), 'rate_limited');
    const web = await onHost(s, HOST)('POST', '/api/auth/login', { body: BOSS });
    assert.equal(web.status, 429, 'the same account on the web is locked too');
    assert.equal(await codeOf(core.auth.signIn(BOSS_ONE.email, BOSS_ONE.password, req('10.2.2.10'), 'ftp')), 'signed in', "tenant 1's same name is not");
  });

  test('NFS: an export runs with its account in the admin’s tenant; another tenant neither sees nor changes it', async () => {
    const on = onHost(s, HOST);
    const token = bossToken;
    const me = await on('GET', '/api/auth/me', { token });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    const mine = me.body.user.id as number;
    const operatorId = (await s.api('GET', '/api/auth/me', { token: operator })).body.user.id as number;
    const path = '/api/admin/gateways/nfs/exports';
    const made = await on('POST', path, { token, body: { path: '/Two', clients: '127.0.0.1', user_id: mine } });
    assert.equal(made.status, 201, 'the account is read in tenant 2: ' + JSON.stringify(made.body));
    assert.equal(made.body.export.tenant_id, undefined, 'no tenant_id in the answer');
    const theirs = await on('POST', path, { token, body: { path: '/Two', clients: '127.0.0.1', user_id: operatorId } });
    assert.equal(theirs.status, 400, "tenant 1's account is no account of tenant 2");
    assert.equal(theirs.body.details.field, 'user_id');
    assert.deepEqual(
      (await on('GET', path, { token })).body.exports.map((e: { id: number }) => e.id),
      [made.body.export.id],
    );
    assert.deepEqual((await s.api('GET', path, { token: operator })).body.exports, [], "tenant 1's admin does not see it");
    const other = `${path}/${made.body.export.id}`;
    assert.equal((await s.api('PATCH', other, { token: operator, body: { read_only: true } })).status, 404);
    assert.equal((await s.api('DELETE', other, { token: operator })).status, 404);
    assert.equal((await on('DELETE', other, { token })).status, 200);
  });

  test('suspension refuses the next verb of an open session and every sign-in; resumed, they work', async () => {
    const open = await core.auth.signIn('anyone', keyToken, req('10.2.3.1'), 'sftp');
    const tree = core.tree(open, 'sftp');
    assert.equal((await tree.stat('/Two/two.txt')).size, 1);
    assert.equal((await s.api('PATCH', `/api/platform/tenants/${tenantId}`, { token: operator, body: { status: 'suspended' } })).status, 200);
    assert.equal(await codeOf(tree.stat('/Two/two.txt')), 'unauthenticated', 'the open session’s next verb');
    assert.equal(await codeOf(roots(core, open)), 'unauthenticated');
    assert.equal(await codeOf(core.auth.signIn('anyone', keyToken, req('10.2.3.1'), 'sftp')), 'unauthenticated');
    assert.equal(await core.auth.s3Key(`fdk_${/^fdk_(\d+)_/.exec(keyToken)![1]}`, req('10.2.3.1')), null);
    assert.equal(await codeOf(core.auth.signIn(`someone@acme`, 'any-password-1', req('10.2.3.2'), 'ftp')), 'invalid_credentials');
    assert.equal((await propfind(s, { host: HOST, user: 'someone', password: 'any-password-1' })).status, 401);
    assert.equal((await s.api('PATCH', `/api/platform/tenants/${tenantId}`, { token: operator, body: { status: 'active' } })).status, 200);
    assert.equal((await tree.stat('/Two/two.txt')).size, 1, 'resumed: the same session goes on');
  });
});
