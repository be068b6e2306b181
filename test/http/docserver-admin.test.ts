// Over 60 s in CI (test-timings.json; issue 37): LibreOffice converts six new documents; 18 new office files get LibreOffice thumbnails.
/**
 * Document server settings and new documents (docs/docserver.md): the
 * external services admin routes, the secret sealed at rest, the Test
 * button's two legs against the fake document server, the environment
 * re-applied at every start, capabilities, and new office documents that
 * LibreOffice opens and converts to PDF.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../server/config';
import { createLogger } from '../../server/lib/log';
import { startServer } from '../../server/main';
import { FakeDocserver } from '../helpers/fake-docserver';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { hasTool, tempDir } from '../helpers/tools';

const run = promisify(execFile);
const SECRET = 'shared-docserver-secret-1';
const OFFICE = ['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp'];

describe('docserver: external services and new documents', () => {
  let s: TestServer;
  let admin: string;
  let user: string;
  let root: string;
  let fake: FakeDocserver;
  const cleanups: Array<() => void> = [];

  before(async () => {
    let c;
    ({ dir: root, cleanup: c } = tempDir('filedock-ds-'));
    cleanups.push(c);
    fake = await new FakeDocserver(SECRET).start();
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'u@example.test', username: 'u1', password: 'user-password-1', role: 'user' } });
    user = await s.login('u1', 'user-password-1');
  });
  after(async () => {
    await s.close();
    await fake.stop();
    for (const c of cleanups) c();
  });

  const caps = async () => (await s.api('GET', '/api/capabilities')).body;
  const newfile = (name: string, type: string) => s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs', name, type } });

  test('not configured: both services listed empty, office types left out of newdoc_types and refused by newfile', async () => {
    const r = await s.api('GET', '/api/admin/external', { token: admin });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.services.map((x: any) => [x.name, x.url, x.enabled, x.healthy, x.env_managed, x.jwt_secret]),
      [
        ['docserver', '', false, null, false, ''],
        ['diagram', '', false, null, false, ''],
      ],
    );
    const c = await caps();
    assert.deepEqual(c.external, { docserver_url: '', diagram_url: '', text_diagram: true });
    assert.deepEqual(
      c.newdoc_types.map((t: any) => t.ext),
      ['txt', 'md'],
    );
    const bad = await newfile('report', 'docx');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
    const txt = await newfile('notes', 'txt');
    assert.equal(txt.status, 200, JSON.stringify(txt.body));
    assert.equal(statSync(join(root, 'notes.txt')).size, 0);
  });

  test('only admins reach the routes; unknown names and bad URLs are refused', async () => {
    assert.equal((await s.api('GET', '/api/admin/external', { token: user })).status, 403);
    assert.equal((await s.api('GET', '/api/admin/external')).status, 401);
    assert.equal((await s.api('PUT', '/api/admin/external/docserver', { token: user, body: { url: fake.url, jwt_secret: 'x' } })).status, 403);
    assert.equal((await s.api('PUT', '/api/admin/external/mailer', { token: admin, body: { url: fake.url } })).status, 404);
    const bad = await s.api('PUT', '/api/admin/external/docserver', { token: admin, body: { url: 'ftp://x', jwt_secret: 'x' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.field, 'url');
    const extra = await s.api('PUT', '/api/admin/external/docserver', { token: admin, body: { url: fake.url, nope: 1 } });
    assert.equal(extra.status, 400);
    assert.equal((await s.api('POST', '/api/admin/external/docserver/test', { token: admin })).body.error, 'not_configured');
  });

  test('PUT stores the secret sealed, reads it back as ***, keeps it on ***; capabilities follow at once; audited', async () => {
    const put = await s.api('PUT', '/api/admin/external/docserver', { token: admin, body: { url: `${fake.url}/`, jwt_secret: SECRET } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.url, fake.url, 'trailing slash dropped');
    assert.equal(put.body.jwt_secret, '***');
    assert.equal(put.body.enabled, true);
    const row = s.server.db.sqlite!.prepare("SELECT jwt_secret FROM external_services WHERE name = 'docserver'").get() as { jwt_secret: string };
    assert.match(row.jwt_secret, /^enc:v1:/);
    assert.ok(!row.jwt_secret.includes(SECRET));
    const keep = await s.api('PUT', '/api/admin/external/docserver', { token: admin, body: { url: fake.url, jwt_secret: '***' } });
    assert.equal(keep.body.enabled, true);
    assert.equal(s.server.services.docserver.external.docserver()?.secret, SECRET);
    const list = await s.api('GET', '/api/admin/external', { token: admin });
    assert.equal(JSON.stringify(list.body).includes(SECRET), false);
    const c = await caps();
    assert.equal(c.external.docserver_url, fake.url);
    assert.deepEqual(
      c.newdoc_types.map((t: any) => t.ext),
      [...OFFICE, 'txt', 'md'],
    );
    assert.deepEqual(c.newdoc_types[0], {
      ext: 'docx',
      group: 'word',
      mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      requires: 'docserver',
    });
    const audit = await s.api('GET', '/api/admin/audit?action=admin.config_change', { token: admin });
    assert.equal(audit.status, 200);
    const ev = audit.body.events.find((e: any) => e.resource === 'external:docserver');
    assert.ok(ev, 'audited');
    assert.equal(JSON.stringify(ev.meta).includes(SECRET), false, 'the secret is not in the audit row');
  });

  test('the diagram editor: a URL, no secret; drawio offered only with it', async () => {
    const secret = await s.api('PUT', '/api/admin/external/diagram', { token: admin, body: { url: 'http://127.0.0.1:9/draw', jwt_secret: 'x' } });
    assert.equal(secret.status, 400);
    const put = await s.api('PUT', '/api/admin/external/diagram', { token: admin, body: { url: 'http://127.0.0.1:9/draw' } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const c = await caps();
    assert.equal(c.external.diagram_url, 'http://127.0.0.1:9/draw');
    assert.deepEqual(c.newdoc_types.at(-1), { ext: 'drawio', group: 'diagram', mime: 'application/vnd.jgraph.mxfile', requires: 'diagram' });
    const d = await newfile('flow', 'drawio');
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.match(readFileSync(join(root, 'flow.drawio'), 'utf8'), /^<mxfile[\s\S]*<mxGraphModel[\s\S]*<\/mxfile>/);
  });

  test('Test button: health, version and latency; the probe URL reached, not reached, unmeasured', async () => {
    let r = await s.api('POST', '/api/admin/external/docserver/test', { token: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.healthy, true);
    assert.equal(r.body.version, '8.2.1-fake');
    assert.ok(Number.isInteger(r.body.latency_ms) && r.body.latency_ms >= 0);
    assert.equal(r.body.fetch_probe, 'reached');
    assert.equal(r.body.callback_base, s.url);
    assert.ok(fake.conversions.at(-1)!.ok);
    const row = (await s.api('GET', '/api/admin/external', { token: admin })).body.services[0];
    assert.equal(row.healthy, true);
    assert.ok(row.last_check);
    // The probe URL is one-shot: fetched again, it is refused.
    const again = await fetch(fake.conversions.at(-1)!.url);
    assert.equal(again.status, 404);

    fake.fetchProbe = false;
    r = await s.api('POST', '/api/admin/external/docserver/test', { token: admin });
    assert.equal(r.body.fetch_probe, 'not_reached');
    fake.fetchProbe = true;

    fake.secret = 'another-secret';
    r = await s.api('POST', '/api/admin/external/docserver/test', { token: admin });
    assert.equal(r.body.healthy, true);
    assert.equal(r.body.fetch_probe, 'unmeasured', 'the document server refused our signature');
    fake.secret = SECRET;

    const down = await s.api('PUT', '/api/admin/external/diagram', { token: admin, body: { url: 'http://127.0.0.1:9' } });
    assert.equal(down.status, 200);
    r = await s.api('POST', '/api/admin/external/diagram/test', { token: admin });
    assert.equal(r.body.healthy, false);
    assert.ok(r.body.error);
  });

  test('new office documents are valid: each converts to PDF with LibreOffice headless', async (t) => {
    if (!hasTool('soffice')) {
      if (process.env.CI) assert.fail('[CI] soffice not found: install libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui');
      t.skip('soffice not found: install libreoffice-writer-nogui, -calc-nogui and -impress-nogui');
      return;
    }
    const { dir: out, cleanup } = tempDir('filedock-ds-pdf-');
    cleanups.push(cleanup);
    const sources: string[] = [];
    for (const ext of OFFICE) {
      const r = await newfile(`new-${ext}`, ext);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.entry.name, `new-${ext}.${ext}`);
      const src = join(root, `new-${ext}.${ext}`);
      assert.ok(statSync(src).size > 0);
      if (ext.startsWith('od')) assert.equal(readFileSync(src).subarray(30, 38).toString(), 'mimetype', 'ODF: mimetype stored first');
      sources.push(src);
    }
    // One LibreOffice for all six, one after another in its own profile (a start with a fresh profile costs
    // seconds; RECIPES.md: only two processes sharing a profile race).
    const profile = join(out, 'profile');
    await run('soffice', ['--headless', `-env:UserInstallation=file://${profile}`, '--convert-to', 'pdf', '--outdir', out, ...sources], { timeout: 240_000 });
    for (const ext of OFFICE) {
      const pdf = join(out, `new-${ext}.pdf`);
      assert.ok(existsSync(pdf), `${ext}: LibreOffice produced no PDF`);
      assert.equal(readFileSync(pdf).subarray(0, 5).toString(), '%PDF-');
    }
    // Many in a row (each new office file also gets a LibreOffice thumbnail in the background); how fast is
    // bench/docserver.ts's to measure, not a test's: a timed assertion only measures the CI machine's load.
    for (let i = 0; i < 12; i++) assert.equal((await newfile(`many-${i}`, OFFICE[i % OFFICE.length])).status, 200);
    const taken = await newfile('new-docx', 'docx');
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error, 'name_taken');
  });
});

test('docserver: the environment is applied at every start and marks the row env_managed', async () => {
  const { dir, cleanup } = tempDir('filedock-ds-env-');
  const start = (env: Record<string, string>) =>
    startServer(
      loadConfig({
        SERVICE_DATA_DIR: dir,
        SERVICE_PORT: '0',
        SERVICE_HOST: '127.0.0.1',
        SERVICE_ADMIN_EMAIL: ADMIN.email,
        SERVICE_ADMIN_PASSWORD: ADMIN.password,
        SERVICE_UPDATE_CHECK: '0',
        ...env,
      }),
      { logger: createLogger('error') },
    );
  const call = async (port: number, method: string, path: string, token?: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const login = async (port: number) => (await call(port, 'POST', '/api/auth/login', undefined, ADMIN)).body.token as string;
  try {
    let srv = await start({
      SERVICE_DOCSERVER_URL: 'http://docs-a.example.test',
      SERVICE_DOCSERVER_JWT: 'env-secret-a',
      SERVICE_DOCSERVER_CALLBACK_URL: 'http://files.lan:5212',
    });
    let token = await login(srv.port);
    let row = (await call(srv.port, 'GET', '/api/admin/external', token)).body.services[0];
    assert.deepEqual(
      [row.url, row.env_managed, row.enabled, row.jwt_secret, row.callback_url],
      ['http://docs-a.example.test', true, true, '***', 'http://files.lan:5212'],
    );
    const put = await call(srv.port, 'PUT', '/api/admin/external/docserver', token, { url: 'http://other.example.test', jwt_secret: 'x' });
    assert.equal(put.status, 409, 'an environment-managed row is changed in the environment');
    await srv.close();

    srv = await start({ SERVICE_DOCSERVER_URL: 'http://docs-b.example.test', SERVICE_DOCSERVER_JWT: 'env-secret-b' });
    token = await login(srv.port);
    row = (await call(srv.port, 'GET', '/api/admin/external', token)).body.services[0];
    assert.deepEqual([row.url, row.env_managed, row.callback_url], ['http://docs-b.example.test', true, '']);
    assert.equal(srv.services.docserver.external.docserver()?.secret, 'env-secret-b');
    assert.equal((await call(srv.port, 'GET', '/api/capabilities')).body.external.docserver_url, 'http://docs-b.example.test');
    await srv.close();

    srv = await start({ SERVICE_DOCSERVER_CALLBACK_URL: 'http://tunnel.example.test' });
    token = await login(srv.port);
    row = (await call(srv.port, 'GET', '/api/admin/external', token)).body.services[0];
    assert.deepEqual(
      [row.url, row.env_managed, row.callback_url],
      ['http://docs-b.example.test', false, 'http://tunnel.example.test'],
      'without URL and secret in the environment the row stays and becomes editable',
    );
    assert.equal(srv.services.docserver.external.docserver()?.secret, 'env-secret-b');
    assert.equal((await call(srv.port, 'PUT', '/api/admin/external/docserver', token, { url: '', jwt_secret: '' })).status, 200);
    assert.equal((await call(srv.port, 'GET', '/api/capabilities')).body.newdoc_types.length, 2);
    await srv.close();
  } finally {
    cleanup();
  }
});
