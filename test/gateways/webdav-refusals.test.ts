/**
 * WebDAV refusals: traversal in every URL spelling, XML bombs and external
 * entities, oversized bodies, a client gone mid-PUT (no file, no event),
 * viewer / read-only storage / read-only key / confined key → 403, brute
 * force → 429 like the web, a second-factor account told to use a key,
 * plain HTTP from the network refused, and no /dav on the public listener.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdirSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { freePort, needTool, tempDir } from '../helpers/tools';
import { curl } from './webdav-helpers';

const skip = needTool('curl', 'curl');
const AUTH = `${ADMIN.email}:${ADMIN.password}`;
const VIEWER = { email: 'vee@example.test', username: 'vee', password: 'vee-password-1' };
const MFA = { email: 'mo@example.test', username: 'mo', password: 'mo-password-1' };

describe('WebDAV refusals', { skip: skip ?? false }, () => {
  let s: TestServer;
  let root: string;
  let outside: string;
  let cleanup: () => void;
  let admin: string;
  let dav: string;
  let publicPort: number;
  const req = (path: string, o: Parameters<typeof curl>[1] = {}) => curl(dav + path, { user: AUTH, ...o });

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-davr-'));
    mkdirSync(join(root, 'box/docs/sub'), { recursive: true });
    mkdirSync(join(root, 'ro'));
    outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(root, 'box/docs/a.txt'), 'a');
    publicPort = await freePort();
    s = await startTestServer({ SERVICE_LOGIN_MAX_ATTEMPTS: '3', SERVICE_LOGIN_LOCK: '30s', SERVICE_PUBLIC_LISTEN: `127.0.0.1:${publicPort}` });
    dav = s.url + '/dav';
    admin = await s.login();
    assert.equal(
      (
        await s.api('POST', '/api/admin/storages', {
          token: admin,
          body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: join(root, 'box') } },
        })
      ).status,
      200,
    );
    const ro = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Ro', driver: 'local', config: { path: join(root, 'ro') } },
    });
    assert.equal((await s.api('PUT', `/api/admin/storages/${ro.body.id ?? ro.body.storage?.id}`, { token: admin, body: { read_only: true } })).status, 200);
    for (const u of [
      { ...VIEWER, role: 'viewer' },
      { ...MFA, role: 'user' },
    ])
      assert.equal((await s.api('POST', '/api/admin/users', { token: admin, body: u })).status, 200);
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('traversal in every spelling is refused and touches nothing', async () => {
    for (const p of [
      '/Box/../outside/x.txt',
      '/Box/%2e%2e/outside/x.txt',
      '/Box/%2E%2E/x.txt',
      '/Box/docs%2F..%2F..%2Fx.txt',
      '/Box/a%5C..%5Cx.txt',
      '/Box/a%00.txt',
      '/Box/a%ZZ.txt',
    ]) {
      const r = await req(p, { method: 'PUT', body: 'evil' });
      assert.equal(r.status, 400, `${p}: ${r.status} ${r.body}`);
    }
    const dest = await req('/Box/docs/a.txt', { method: 'COPY', headers: { Destination: `${dav}/Box/%2e%2e/outside/a.txt` } });
    assert.equal(dest.status, 400);
    const foreign = await req('/Box/docs/a.txt', { method: 'COPY', headers: { Destination: 'http://elsewhere.test/dav/Box/x.txt' } });
    assert.equal(foreign.status, 502);
    assert.deepEqual(readdirSync(outside), []);
    assert.equal(existsSync(join(root, 'x.txt')), false);
  });

  test('XML: no DTD (billion laughs, external entities), bounded size, malformed → 400', async () => {
    const laughs =
      `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
      `<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><D:propfind xmlns:D="DAV:"><D:prop><x xmlns="urn:x">&lol3;</x></D:prop></D:propfind>`;
    const xxe = `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">&e;</x></D:prop></D:set></D:propertyupdate>`;
    for (const [method, body] of [
      ['PROPFIND', laughs],
      ['PROPPATCH', xxe],
      ['PROPFIND', '<D:propfind xmlns:D="DAV:"><D:prop>'],
      ['PROPFIND', '<a>&undefined;</a>'],
    ] as const) {
      const r = await req('/Box/docs/a.txt', { method, headers: { Depth: '0' }, body });
      assert.equal(r.status, 400, body.slice(0, 40));
      assert.doesNotMatch(r.body, /root:/);
    }
    const deep = '<a>'.repeat(100) + '</a>'.repeat(100);
    assert.equal((await req('/Box/docs/a.txt', { method: 'PROPFIND', headers: { Depth: '0' }, body: deep })).status, 400);
    const big = `<D:propfind xmlns:D="DAV:"><!--${'x'.repeat(2 << 20)}--><D:allprop/></D:propfind>`;
    assert.equal((await req('/Box/docs/a.txt', { method: 'PROPFIND', headers: { Depth: '0' }, body: big })).status, 413);
    const props = s.server.db.sqlite!.prepare('SELECT count(*) AS n FROM dav_props').get() as { n: number };
    assert.equal(props.n, 0);
  });

  test('a client gone mid-PUT leaves no file and announces nothing', async () => {
    const events: unknown[] = [];
    s.server.bus.on('file.uploaded', (e) => void events.push(e));
    await new Promise<void>((resolve) => {
      const r = request(`${dav}/Box/docs/gone.bin`, {
        method: 'PUT',
        headers: { authorization: 'Basic ' + Buffer.from(AUTH).toString('base64'), 'content-length': String(4 << 20) },
      });
      r.on('error', () => resolve());
      r.write(Buffer.alloc(1 << 20, 1), () =>
        setTimeout(() => {
          r.destroy();
          resolve();
        }, 300),
      );
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(existsSync(join(root, 'box/docs/gone.bin')), false);
    assert.equal(
      readdirSync(join(root, 'box/docs')).some((n) => n.includes('gone')),
      false,
      'no temp file left',
    );
    assert.equal(events.length, 0);
    assert.equal((await req('/Box/docs/gone.bin')).status, 404);
  });

  test('viewer, read-only storage, read-only key and a key outside its root → 403', async () => {
    const v = `${VIEWER.username}:${VIEWER.password}`;
    assert.equal((await curl(`${dav}/Box/docs/a.txt`, { user: v })).status, 200, 'a viewer reads');
    assert.equal((await curl(`${dav}/Box/docs/v.txt`, { method: 'PUT', user: v, body: 'v' })).status, 403);
    assert.equal((await curl(`${dav}/Box/docs/a.txt`, { method: 'DELETE', user: v })).status, 403);
    assert.equal(
      (
        await curl(`${dav}/Box/docs/a.txt`, {
          method: 'LOCK',
          user: v,
          body: '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>',
        })
      ).status,
      403,
    );
    const ro = await req('/Ro/x.txt', { method: 'PUT', body: 'x' });
    assert.equal(ro.status, 403);
    assert.match(ro.body, /read-only/);
    const rkey = (await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 'r', verbs: ['files:read'] } })).body.token;
    assert.equal((await curl(`${dav}/Box/docs/a.txt`, { user: `x:${rkey}` })).status, 200);
    assert.equal((await curl(`${dav}/Box/docs/k.txt`, { method: 'PUT', user: `x:${rkey}`, body: 'k' })).status, 403);
    const ckey = (await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 'c', verbs: ['files:read', 'files:write'], root: '/Box/docs/sub' } }))
      .body.token;
    assert.equal((await curl(`${dav}/Box/docs/sub/in.txt`, { method: 'PUT', user: `x:${ckey}`, body: 'in' })).status, 201);
    assert.equal((await curl(`${dav}/Box/docs/a.txt`, { user: `x:${ckey}` })).status, 403);
    assert.equal(
      (await curl(`${dav}/Box/docs/sub/in.txt`, { method: 'MOVE', user: `x:${ckey}`, headers: { Destination: `${dav}/Box/docs/out.txt` } })).status,
      403,
    );
    const top = await curl(`${dav}/Box/`, { method: 'PROPFIND', user: `x:${ckey}`, headers: { Depth: '1' } });
    assert.equal(top.status, 207);
    assert.deepEqual(
      [...top.body.matchAll(/<D:href>([^<]+)<\/D:href>/g)].map((m) => m[1]),
      ['/dav/Box/', '/dav/Box/docs/'],
      'only the way down',
    );
    assert.equal(existsSync(join(root, 'box/docs/out.txt')), false);
  });

  test('brute force: wrong passwords then 429 with Retry-After (the web sign-in throttle); a second-factor account is told to use a key', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await curl(`${dav}/`, { method: 'PROPFIND', user: `${VIEWER.email}:wrong-${i}-pass`, headers: { Depth: '0' } })).status);
    assert.deepEqual(statuses, [401, 401, 429, 429], 'the third wrong password locks the account (3 attempts)');
    const locked = await curl(`${dav}/`, { method: 'PROPFIND', user: `${VIEWER.email}:${VIEWER.password}`, headers: { Depth: '0' } });
    assert.equal(locked.status, 429, 'even the right password waits out the lock');
    assert.ok(Number(locked.headers['retry-after']) > 0);
    const web = await s.api('POST', '/api/auth/login', { body: { email: VIEWER.email, password: VIEWER.password } });
    assert.equal(web.status, 429, 'the same throttle as the web');

    const mo = await s.login(MFA.email, MFA.password);
    const setup = await s.api('POST', '/api/auth/mfa/totp/setup', { token: mo, body: { current_password: MFA.password } });
    const { TOTP, Secret } = await import('otpauth');
    await s.api('POST', '/api/auth/mfa/totp/confirm', { token: mo, body: { code: TOTP.generate({ secret: Secret.fromBase32(setup.body.secret) }) } });
    const r = await curl(`${dav}/`, { method: 'PROPFIND', user: `${MFA.username}:${MFA.password}`, headers: { Depth: '0' } });
    assert.equal(r.status, 403);
    assert.match(r.body, /API key/);
  });

  test('plain HTTP from the network is refused with a sentence; a local TLS-ending proxy is accepted; no /dav on the public listener', async () => {
    const lan = await req('/Box/docs/a.txt', { headers: { Host: 'filedock.lan' } });
    assert.equal(lan.status, 403);
    assert.match(lan.body, /plain HTTP/);
    const proxied = await req('/Box/docs/a.txt', { headers: { Host: 'files.example.test', 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '203.0.113.9' } });
    assert.equal(proxied.status, 200);
    const pub = await curl(`http://127.0.0.1:${publicPort}/dav/Box/docs/a.txt`, { user: AUTH });
    assert.equal(pub.status, 404);
  });
});
