import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, ADMIN, type TestServer } from '../helpers/server';

describe('bad input gets a clear envelope, never a 500', () => {
  let s: TestServer;
  let admin: string;
  before(async () => {
    s = await startTestServer({ SERVICE_MAX_JSON_BYTES: '4096' });
    admin = await s.login();
  });
  after(() => s.close());

  const envelope = (b: any) => {
    assert.equal(typeof b.error, 'string');
    assert.equal(typeof b.message, 'string');
    assert.ok(b.message.length > 0);
  };

  test('malformed JSON, non-JSON bodies, arrays, huge bodies', async () => {
    const bad = await s.api('POST', '/api/auth/login', { body: '{"email": ', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'bad_json');
    const form = await s.api('POST', '/api/auth/login', { raw: 'email=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 400);
    assert.equal(form.body.error, 'bad_body');
    const arr = await s.api('POST', '/api/auth/login', { body: [1, 2] });
    assert.equal(arr.body.error, 'bad_body');
    const huge = await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'x'.repeat(10_000) } });
    assert.equal(huge.status, 413);
    envelope(huge.body);
  });

  test('schema failures name the field', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/api/auth/login', { email: 42, password: 'x' }, 'email'],
      ['/api/auth/login', { email: 'a@b.c' }, 'password'],
      ['/api/admin/users', { email: 'n@example.test', role: 'superuser' }, 'role'],
      ['/api/admin/users', { email: 'n@example.test', groups: 'not-an-array' }, 'groups'],
    ];
    for (const [path, body, field] of cases) {
      const r = await s.api('POST', path, { token: admin, body });
      assert.equal(r.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal(r.body.error, 'validation_failed');
      assert.equal(r.body.details.field, field);
      envelope(r.body);
    }
    const unknownKey = await s.api('PATCH', '/api/admin/users/1', { token: admin, body: { is_root: true } });
    assert.equal(unknownKey.body.error, 'validation_failed');
    const badId = await s.api('GET', '/api/admin/users/1%20OR%201=1', { token: admin });
    assert.equal(badId.body.error, 'bad_id');
    const badQuery = await s.api('GET', '/api/admin/users?limit=-5', { token: admin });
    assert.equal(badQuery.body.details.field, 'limit');
  });

  test('SQL- and path-like strings are just data', async () => {
    const r = await s.api('GET', `/api/admin/users?q=${encodeURIComponent("' OR 1=1; DROP TABLE users; --")}`, { token: admin });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.users, []);
    const login = await s.api('POST', '/api/auth/login', { body: { email: "admin' --", password: '../../etc/passwd' } });
    assert.equal(login.status, 401);
    assert.equal((await s.api('GET', '/api/admin/users', { token: admin })).body.users.length, 1);
  });

  test('unknown /api routes answer JSON 404; the UI is served elsewhere', async () => {
    const r = await s.api('GET', '/api/does/not/exist');
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'not_found');
    const ui = await fetch(`${s.url}/files/some/deep/link`);
    assert.equal(ui.status, 200);
    assert.match(ui.headers.get('content-type')!, /text\/html/);
  });

  test('messages follow lang, then Accept-Language, then the account language', async () => {
    const tr = await s.api('GET', '/api/auth/me', { headers: { 'accept-language': 'tr-TR,tr;q=0.9,en;q=0.5' } });
    assert.equal(tr.body.error, 'unauthenticated');
    assert.equal(tr.body.message, 'Lütfen önce oturum açın.');
    const q = await s.api('GET', '/api/auth/me?lang=tr');
    assert.equal(q.body.message, 'Lütfen önce oturum açın.');
    await s.api('PATCH', '/api/auth/me', { token: admin, body: { language: 'tr' } });
    const nf = await s.api('GET', '/api/admin/users/999', { token: admin });
    assert.equal(nf.body.message, 'Bulunamadı.');
    await s.api('PATCH', '/api/auth/me', { token: admin, body: { language: null } });
  });

  test('cookie-authenticated writes need our own Origin (CSRF); bearer calls do not', async () => {
    const login = await s.api('POST', '/api/auth/login', { body: ADMIN });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const body = { email: 'csrf@example.test', password: 'csrf-password' };
    const evil = await s.api('POST', '/api/admin/users', { body, headers: { cookie, origin: 'https://evil.example' } });
    assert.equal(evil.status, 403);
    assert.equal(evil.body.error, 'csrf_failed');
    const evilReferer = await s.api('POST', '/api/admin/users', { body, headers: { cookie, referer: 'https://evil.example/page' } });
    assert.equal(evilReferer.body.error, 'csrf_failed');
    const opaque = await s.api('POST', '/api/admin/users', { body, headers: { cookie, origin: 'null' } });
    assert.equal(opaque.body.error, 'csrf_failed');
    const host = new URL(s.url).host;
    const ok = await s.api('POST', '/api/admin/users', { body, headers: { cookie, origin: `http://${host}` } });
    assert.equal(ok.status, 200);
  });

  test('a cookie write without Origin or Referer (curl, scripts) passes with a JSON body or no body; form-like bodies do not', async () => {
    const login = await s.api('POST', '/api/auth/login', { body: ADMIN });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const json = await s.api('POST', '/api/admin/users', { body: { email: 'script@example.test', password: 'script-password' }, headers: { cookie } });
    assert.equal(json.status, 200, JSON.stringify(json.body));
    // What a cross-site HTML form (or a no-cors fetch) could send without a preflight.
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
      const r = await s.api('POST', '/api/files/mkdir', { raw: '{"path":"/x"}', headers: { cookie, 'content-type': type } });
      assert.equal(r.status, 403, type);
      assert.equal(r.body.error, 'csrf_failed', type);
    }
    const formLogout = await s.api('POST', '/api/auth/logout', { raw: '', headers: { cookie, 'content-type': 'text/plain' } });
    assert.equal(formLogout.body.error, 'csrf_failed');
    assert.equal((await s.api('GET', '/api/auth/me', { headers: { cookie } })).status, 200, 'the session survived the forged logout');
    // A bodiless POST with no Content-Type is no form: curl -X POST -b cookie .../logout.
    const logout = await s.api('POST', '/api/auth/logout', { headers: { cookie } });
    assert.equal(logout.status, 200, JSON.stringify(logout.body));
    assert.equal((await s.api('GET', '/api/auth/me', { headers: { cookie } })).status, 401);
  });

  test('first-run setup is closed once an admin exists', async () => {
    const st = await s.api('GET', '/api/auth/setup');
    assert.deepEqual(st.body, { needed: false, local: true });
    const r = await s.api('POST', '/api/auth/setup', { body: { email: 'x@example.test', password: 'password-123' } });
    assert.equal(r.status, 409);
    assert.equal(r.body.error, 'setup_done');
  });
});

describe('first-run setup without SERVICE_ADMIN_*', () => {
  test('answers only loopback clients and creates the admin once', async () => {
    const s = await startTestServer({ SERVICE_ADMIN_EMAIL: '', SERVICE_ADMIN_PASSWORD: '' });
    try {
      assert.equal((await s.api('GET', '/api/auth/setup')).body.needed, true);
      const proxied = await s.api('POST', '/api/auth/setup', {
        body: { email: 'owner@example.test', password: 'owner-password' },
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      assert.equal(proxied.status, 403);
      assert.equal(proxied.body.error, 'setup_local_only');
      const r = await s.api('POST', '/api/auth/setup', { body: { email: 'owner@example.test', password: 'owner-password' } });
      assert.equal(r.status, 200);
      assert.equal(r.body.user.role, 'admin');
      assert.equal((await s.api('GET', '/api/auth/setup')).body.needed, false);
    } finally {
      await s.close();
    }
  });
});
