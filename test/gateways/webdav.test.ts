/**
 * WebDAV at /dav/ on a real server with curl as the client: discovery and
 * sign-in, PROPFIND (depths, streaming a big folder, dead properties),
 * PUT/GET with ranges and conditions, MKCOL, DELETE to the trash, COPY/MOVE
 * with Overwrite, LOCK/UNLOCK with tokens in If, storage rename and uid.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { curl, LOCKINFO, PROPFIND_ALL } from './webdav-helpers';

const skip = needTool('curl', 'curl');
const AUTH = `${ADMIN.email}:${ADMIN.password}`;

describe('WebDAV gateway', { skip: skip ?? false }, () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let admin: string;
  let dav: string;
  const req = (path: string, o: Parameters<typeof curl>[1] = {}) => curl(dav + path, { user: AUTH, ...o });

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-dav-'));
    mkdirSync(join(root, 'docs/sub'), { recursive: true });
    writeFileSync(join(root, 'docs/a.txt'), '0123456789');
    s = await startTestServer();
    dav = s.url + '/dav';
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('OPTIONS announces class 1 and 2 without signing in; other methods ask for Basic auth', async () => {
    const o = await curl(dav + '/', { method: 'OPTIONS' });
    assert.equal(o.status, 200);
    assert.equal(o.headers.dav, '1, 2');
    assert.match(o.headers.allow, /PROPFIND/);
    const anon = await curl(dav + '/', { method: 'PROPFIND', headers: { Depth: '0' } });
    assert.equal(anon.status, 401);
    assert.match(anon.headers['www-authenticate'], /^Basic realm="Filedock"/);
    const wrong = await curl(dav + '/', { method: 'PROPFIND', user: `${ADMIN.email}:nope-nope-1`, headers: { Depth: '0' } });
    assert.equal(wrong.status, 401);
    // The session cookie is not a WebDAV credential (a cross-site page could otherwise write).
    const cookie = await curl(dav + '/Box/docs/x.txt', { method: 'PUT', headers: { Cookie: `service_session=${admin}` }, body: 'x' });
    assert.equal(cookie.status, 401);
    assert.equal(existsSync(join(root, 'docs/x.txt')), false);
  });

  test('the registry reports WebDAV listening at /dav/; GET /api/gateways gives every signed-in person the addresses', async () => {
    const zed = { email: 'zed@example.test', username: 'zed', password: 'zed-password-1', role: 'user' };
    assert.equal((await s.api('POST', '/api/admin/users', { token: admin, body: zed })).status, 200);
    const mine = await s.api('GET', '/api/gateways', { token: await s.login(zed.email, zed.password) });
    assert.equal(mine.status, 200);
    assert.deepEqual(
      mine.body.gateways.find((g: any) => g.protocol === 'webdav'),
      { protocol: 'webdav', enabled: true, url: `${s.url}/dav/` },
    );
    assert.equal(mine.body.sessions, undefined, "sessions are the admin's");
    assert.equal((await s.api('GET', '/api/gateways')).status, 401);
  });

  test('PROPFIND: / lists storages, depth 1 lists a folder, infinity is refused, props by name', async () => {
    const top = await req('/', { method: 'PROPFIND', headers: { Depth: '1' } });
    assert.equal(top.status, 207);
    assert.match(top.body, /<D:href>\/dav\/Box\/<\/D:href>/);
    const docs = await req('/Box/docs/', { method: 'PROPFIND', headers: { Depth: '1' }, body: PROPFIND_ALL });
    assert.equal(docs.status, 207);
    assert.match(docs.body, /<D:href>\/dav\/Box\/docs\/a.txt<\/D:href>.*<D:getcontentlength>10<\/D:getcontentlength>/s);
    assert.match(docs.body, /<D:href>\/dav\/Box\/docs\/sub\/<\/D:href>.*?<D:collection\/>/s);
    const inf = await req('/Box/', { method: 'PROPFIND', headers: { Depth: 'infinity' } });
    assert.equal(inf.status, 403);
    assert.match(inf.body, /propfind-finite-depth/);
    const some = await req('/Box/docs/a.txt', {
      method: 'PROPFIND',
      headers: { Depth: '0' },
      body: '<?xml version="1.0"?><propfind xmlns="DAV:"><prop><getetag/><nothere xmlns="urn:x"/></prop></propfind>',
    });
    assert.equal(some.status, 207);
    assert.match(some.body, /<D:getetag>&quot;.+&quot;<\/D:getetag>.*200 OK.*nothere.*404 Not Found/s);
    const missing = await req('/Box/docs/none.txt', { method: 'PROPFIND', headers: { Depth: '0' } });
    assert.equal(missing.status, 404);
  });

  test('PROPPATCH stores dead properties that follow MOVE and COPY and go with DELETE; live ones are protected', async () => {
    writeFileSync(join(root, 'docs/p.txt'), 'p');
    await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Box/docs' } });
    const set = await req('/Box/docs/p.txt', {
      method: 'PROPPATCH',
      body: '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:color>blue <Z:b>deep</Z:b></Z:color></D:prop></D:set></D:propertyupdate>',
    });
    assert.equal(set.status, 207);
    assert.match(set.body, /200 OK/);
    const live = await req('/Box/docs/p.txt', {
      method: 'PROPPATCH',
      body: '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><D:getetag>x</D:getetag><Z:size>1</Z:size></D:prop></D:set></D:propertyupdate>',
    });
    assert.match(live.body, /403 Forbidden.*424 Failed Dependency/s);
    const get = (p: string) =>
      req(p, {
        method: 'PROPFIND',
        headers: { Depth: '0' },
        body: '<D:propfind xmlns:D="DAV:"><D:prop><color xmlns="urn:z"/><size xmlns="urn:z"/></D:prop></D:propfind>',
      });
    const got = await get('/Box/docs/p.txt');
    assert.match(got.body, /<x:color xmlns:x="urn:z">blue <x:b xmlns:x="urn:z">deep<\/x:b><\/x:color>/);
    assert.match(got.body, /size.*404 Not Found/s, 'the refused update changed nothing');
    assert.equal((await req('/Box/docs/p.txt', { method: 'MOVE', headers: { Destination: `${dav}/Box/docs/q.txt` } })).status, 201);
    assert.match((await get('/Box/docs/q.txt')).body, /blue/);
    assert.equal((await req('/Box/docs/q.txt', { method: 'COPY', headers: { Destination: `${dav}/Box/docs/r.txt` } })).status, 201);
    assert.match((await get('/Box/docs/r.txt')).body, /blue/);
    assert.equal((await req('/Box/docs/r.txt', { method: 'DELETE' })).status, 204);
    assert.equal((await req('/Box/docs/r.txt', { method: 'PUT', body: 'new' })).status, 201);
    assert.doesNotMatch((await get('/Box/docs/r.txt')).body, /blue/, "a new node starts without the old one's properties");
  });

  test('PUT 201 then 204, GET with ranges and ETag, If-Match / If-None-Match', async () => {
    const created = await req('/Box/docs/up.txt', { method: 'PUT', body: 'hello world' });
    assert.equal(created.status, 201);
    assert.equal(readFileSync(join(root, 'docs/up.txt'), 'utf8'), 'hello world');
    const etag = created.headers.etag;
    assert.ok(etag);
    assert.equal((await req('/Box/docs/up.txt', { method: 'PUT', body: 'hello again', headers: { 'If-None-Match': '*' } })).status, 412);
    assert.equal((await req('/Box/docs/up.txt', { method: 'PUT', body: 'hello again', headers: { 'If-Match': '"nope"' } })).status, 412);
    assert.equal((await req('/Box/docs/up.txt', { method: 'PUT', body: 'hello again', headers: { 'If-Match': etag } })).status, 204);
    const range = await req('/Box/docs/up.txt', { headers: { Range: 'bytes=6-10' } });
    assert.equal(range.status, 206);
    assert.equal(range.body, 'again');
    assert.equal(range.headers['content-range'], 'bytes 6-10/11');
    const whole = await req('/Box/docs/up.txt');
    assert.equal((await req('/Box/docs/up.txt', { headers: { 'If-None-Match': whole.headers.etag } })).status, 304);
    assert.equal((await req('/Box/nofolder/x.txt', { method: 'PUT', body: 'x' })).status, 409, 'a missing parent');
  });

  test('MKCOL, DELETE to the trash, COPY/MOVE with Overwrite', async () => {
    assert.equal((await req('/Box/made', { method: 'MKCOL' })).status, 201);
    assert.equal((await req('/Box/made', { method: 'MKCOL' })).status, 405);
    assert.equal((await req('/Box/none/made', { method: 'MKCOL' })).status, 409);
    assert.equal((await req('/Box/made/f.txt', { method: 'PUT', body: 'f' })).status, 201);
    assert.equal((await req('/Box/made/g.txt', { method: 'PUT', body: 'g' })).status, 201);
    const noOw = await req('/Box/made/f.txt', { method: 'MOVE', headers: { Destination: `${dav}/Box/made/g.txt`, Overwrite: 'F' } });
    assert.equal(noOw.status, 412);
    assert.equal(readFileSync(join(root, 'made/g.txt'), 'utf8'), 'g');
    assert.equal((await req('/Box/made/f.txt', { method: 'MOVE', headers: { Destination: `${dav}/Box/made/g.txt` } })).status, 204);
    assert.equal(readFileSync(join(root, 'made/g.txt'), 'utf8'), 'f');
    assert.equal((await req('/Box/made', { method: 'COPY', headers: { Destination: `${dav}/Box/made2` } })).status, 201);
    assert.equal(readFileSync(join(root, 'made2/g.txt'), 'utf8'), 'f');
    assert.equal((await req('/Box/made2', { method: 'DELETE' })).status, 204);
    assert.equal(existsSync(join(root, 'made2')), false);
    assert.ok(
      readdirSync(join(root, '.service-trash'), { recursive: true }).some((n) => String(n).endsWith('g.txt')),
      'in the trash',
    );
    assert.equal((await req('/Box', { method: 'DELETE' })).status, 403, 'a storage is not deleted over WebDAV');
  });

  test('LOCK / UNLOCK: a write without the token is refused, with it accepted; refresh; shared vs exclusive', async () => {
    await req('/Box/docs/l.txt', { method: 'PUT', body: 'l' });
    const l = await req('/Box/docs/l.txt', { method: 'LOCK', headers: { Timeout: 'Second-60' }, body: LOCKINFO() });
    assert.equal(l.status, 200);
    const token = /<(opaquelocktoken:[^>]+)>/.exec(l.headers['lock-token'])![1];
    assert.match(l.body, /<D:timeout>Second-60<\/D:timeout>/);
    assert.equal((await req('/Box/docs/l.txt', { method: 'PUT', body: 'x' })).status, 423);
    assert.equal((await req('/Box/docs/l.txt', { method: 'LOCK', body: LOCKINFO('shared') })).status, 423);
    assert.equal((await req('/Box/docs/l.txt', { method: 'PUT', body: 'x', headers: { If: '(<opaquelocktoken:bogus>)' } })).status, 412);
    assert.equal((await req('/Box/docs/l.txt', { method: 'PUT', body: 'y', headers: { If: `(<${token}>)` } })).status, 204);
    const refresh = await req('/Box/docs/l.txt', { method: 'LOCK', headers: { If: `(<${token}>)`, Timeout: 'Second-120' } });
    assert.equal(refresh.status, 200);
    assert.match(refresh.body, /Second-1[12]\d/);
    const disc = await req('/Box/docs/l.txt', {
      method: 'PROPFIND',
      headers: { Depth: '0' },
      body: '<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>',
    });
    assert.match(disc.body, new RegExp(token));
    assert.equal((await req('/Box/docs/l.txt', { method: 'UNLOCK', headers: { 'Lock-Token': '<opaquelocktoken:nope>' } })).status, 409);
    assert.equal((await req('/Box/docs/l.txt', { method: 'UNLOCK', headers: { 'Lock-Token': `<${token}>` } })).status, 204);
    assert.equal((await req('/Box/docs/l.txt', { method: 'PUT', body: 'z' })).status, 204);
    // A lock on a missing name creates an empty file; a depth-infinity lock on a folder covers its files.
    const fresh = await req('/Box/docs/new-locked.txt', { method: 'LOCK', body: LOCKINFO() });
    assert.equal(fresh.status, 201);
    assert.equal(readFileSync(join(root, 'docs/new-locked.txt'), 'utf8'), '');
    const dir = await req('/Box/docs/sub/', { method: 'LOCK', body: LOCKINFO() });
    assert.equal(dir.status, 200);
    assert.equal((await req('/Box/docs/sub/in.txt', { method: 'PUT', body: 'i' })).status, 423);
    assert.equal((await req('/Box/docs/sub', { method: 'DELETE' })).status, 423);
  });

  test('renaming a storage changes the first segment at once; the uid works in its place', async () => {
    const st = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages.find((x: any) => x.name === 'Box');
    assert.equal((await s.api('PATCH', `/api/admin/storages/${st.id}`, { token: admin, body: { name: 'Crate' } })).status, 200);
    assert.equal((await req('/Box/docs/a.txt')).status, 404);
    const byName = await req('/Crate/docs/a.txt');
    assert.equal(byName.status, 200);
    assert.equal(byName.body, '0123456789');
    const byUid = await req(`/${st.uid}/docs/a.txt`);
    assert.equal(byUid.status, 200);
    assert.equal((await req(`/${st.uid}/docs/uid.txt`, { method: 'PUT', body: 'u' })).status, 201);
    assert.equal(readFileSync(join(root, 'docs/uid.txt'), 'utf8'), 'u');
    const top = await req('/', { method: 'PROPFIND', headers: { Depth: '1' } });
    assert.match(top.body, /\/dav\/Crate\//);
    await s.api('PATCH', `/api/admin/storages/${st.id}`, { token: admin, body: { name: 'Box' } });
  });
});
