/**
 * Public app pages end to end (SPEC App plugins: "Public pages of apps are real
 * shares at /s/{token}", rules 1-3; docs/app-plugins.md, "Public app pages"):
 * a real signed app opens a page with a PIN for a person through the host API;
 * a visitor reads its state, fails and passes the PIN gate, opens the page
 * (a counted visit, a sanitised surface with refs instead of paths and no
 * `open`), submits a job that runs as the creator through the write gate, reads
 * an exposed file with a range, follows the job it queued; the creator losing access, the app going and the
 * creator disabled each close the page as the spec says; a held licence stops a
 * paid app's page (403 store_license, nothing queued); the old /p/ addresses
 * move; the admin lists the app links.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { generateKeyPairSync } from 'node:crypto';
import { buildAppPackage, issueLicense, publisherKey, sampleManifest } from '../helpers/app-package';

const PAGES_CODE = String.raw`
const tryCall = async (method, args) => { try { await host.call(method, args); return 'ok'; } catch (e) { return e.code || 'error'; } };
app.event = async ({ view, event, data, paths, public: pub, state }) => {
  if (view === 'publisher') {
    // The person's side: open (or revoke) a page over the selected files.
    if (data.revoke) return { nodes: [{ type: 'text', text: JSON.stringify(await host.call('pages.revoke', { token: data.revoke })) }] };
    try {
      const r = await host.call('pages.create', { paths: paths.map((p) => p.path), page: data.page || 'sign', title: 'Sign <b>here</b>', pin: data.pin, max_visits: data.max_visits, expires_at: data.expires_at });
      return { nodes: [{ type: 'text', text: JSON.stringify(r) }] };
    } catch (e) {
      return { nodes: [{ type: 'text', text: JSON.stringify({ error: e.code }) }] };
    }
  }
  if (event === 'submit') {
    if (!data.name) return { errors: [{ key: 'name', code: 'required' }] };
    if (data.name === 'ghost') return { surface: { nodes: [] }, job: { action: 'nope', params: {} } };
    return { surface: { nodes: [{ type: 'text', text: 'thanks ' + data.name }], open: { path: paths[0].path } }, job: { action: 'stamp', params: { name: data.name, replace: data.replace } }, open: { path: paths[0].path } };
  }
  return { nodes: [{ type: 'text', text: 'event ' + event + ' public=' + pub }], state };
};
app.view = async ({ view, paths, public: pub, lang }) => {
  const first = paths[0];
  return {
    title: 'Sign ' + first.name,
    open: { path: first.path },
    nodes: [
      { type: 'text', text: 'public=' + pub + ' files=' + paths.length + ' lang=' + lang },
      { type: 'text', text: 'read=' + (await host.call('files.read', { path: first.path })).data },
      { type: 'text', text: 'outside=' + (await tryCall('files.read', { path: '/Docs/private.txt' })) + ' write=' + (await tryCall('files.write', { path: '/Docs/x.txt', data: 'x' })) + ' pages=' + (await tryCall('pages.create', { paths: [first.path], page: 'sign' })) },
      { type: 'preview', path: first.path },
      { type: 'preview', path: '/Docs/private.txt' },
      { type: 'list', items: [{ title: 'mine', path: first.path }, { title: 'not yours', path: '/Docs/private.txt' }] },
      { type: 'form', fields: [{ key: 'name', type: 'string', required: true }] },
      { type: 'html', html: '<script>alert(1)</script>' },
    ],
    footer: [{ id: 'sign', label: 'Sign', primary: true }],
  };
};
app.action = async ({ action, paths, params }) => {
  // replace: the last exposed file is rewritten (an output the visitor may follow by its ref).
  const out = params.replace ? paths[paths.length - 1].path : paths[0].path.replace(/\.txt$/, '.signed-' + params.name + '.txt');
  await host.call('files.write', { path: out, data: 'signed by ' + params.name, overwrite: !!params.replace });
  return { open: { path: out }, message: 'stamped' };
};
`;

const pagesManifest = (over: Record<string, unknown> = {}) =>
  sampleManifest({
    id: 'pages',
    name: 'Pages',
    filex_range: '>=0.1.0',
    call_timeout_ms: 2000,
    permissions: ['files.read', 'files.write', 'public_pages'],
    actions: [{ id: 'stamp', label: 'a.stamp', applies: { kind: 'file', multi: true }, output_mode: 'new_file' }],
    views: [
      { id: 'publisher', label: 'v.publisher', placement: 'dialog', applies: { multi: true, min: 0 } },
      { id: 'sign', label: 'v.sign', placement: 'page' },
    ],
    ...over,
  });
const PACKS = { en: { 'a.stamp': 'Stamp', 'v.publisher': 'Publish', 'v.sign': 'Sign' } };

describe('public app pages', () => {
  let s: TestServer;
  let admin: string, uma: string, vic: string, umaId: number;
  let docs: string, docsId: number;
  const cleanups: Array<() => void> = [];
  const key = publisherKey('acme');
  const renderer = tempDir('filedock-renderer-');
  cleanups.push(renderer.cleanup);

  /** Opens a page as uma through the app's publisher view; answers what pages.create returned. */
  const openPage = async (paths: string[], data: Record<string, unknown> = {}, token = uma) => {
    const r = await s.api('POST', '/api/files/plugins/views/pages/publisher/event', { token, body: { paths, event: 'action', data } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return JSON.parse(r.body.surface.nodes[0].text);
  };
  const pub = (method: string, path: string, o: { body?: unknown; cookie?: string; headers?: Record<string, string> } = {}) =>
    s.api(method, path, { body: o.body, headers: { ...(o.cookie ? { cookie: o.cookie } : {}), ...(o.headers ?? {}) } });
  const event = (token: string, body: unknown, cookie?: string) => pub('POST', `/api/public/s/${token}/event`, { body, cookie });
  const pollOp = async (id: string, token: string): Promise<any> => {
    for (let i = 0; i < 400; i++) {
      const r = await s.api('GET', `/api/files/ops/${id}`, { token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      if (['ok', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`op ${id} did not finish`);
  };

  before(async () => {
    writeFileSync(
      join(renderer.dir, 'app-page.html'),
      '<!doctype html><html><body><div id="app-page-marker"></div><script type="module" src="/assets/app-page.js"></script></body></html>',
    );
    // An https public address: links are absolute, and the page cookie is Secure even though TLS ends before us.
    // The split public listener too: the page, its API and its assets must be reachable there.
    mkdirSync(join(renderer.dir, 'assets'));
    writeFileSync(join(renderer.dir, 'assets', 'app-page.js'), 'console.log(1)');
    s = await startTestServer({ SERVICE_PUBLIC_URL: 'https://files.example.test', SERVICE_PUBLIC_LISTEN: '127.0.0.1:0' }, { rendererDir: renderer.dir });
    admin = await s.login();
    const u = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: 'uma@example.test', username: 'uma', password: 'uma-password-1', role: 'user' },
    });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    umaId = u.body.user?.id ?? u.body.id;
    uma = await s.login('uma@example.test', 'uma-password-1');
    assert.equal(
      (
        await s.api('POST', '/api/admin/users', {
          token: admin,
          body: { email: 'vic@example.test', username: 'vic', password: 'vic-password-1', role: 'viewer' },
        })
      ).status,
      200,
    );
    vic = await s.login('vic@example.test', 'vic-password-1');
    const d = tempDir('filedock-pages-docs-');
    cleanups.push(d.cleanup);
    docs = d.dir;
    mkdirSync(join(docs, 'sub'));
    writeFileSync(join(docs, 'contract.txt'), 'the contract text');
    writeFileSync(join(docs, 'page.html'), '<script>alert(1)</script>');
    writeFileSync(join(docs, 'private.txt'), 'not exposed');
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: docs }, sync_mode: 'poll' },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    docsId = st.body.id;
    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/keys', { token: admin, body: { publisher: 'acme', public_key_pem: key.trusted.public_key_pem } })).status,
      201,
    );
    const pkg = await buildAppPackage({ key, manifest: pagesManifest(), code: PAGES_CODE, languages: PACKS });
    const r = await s.api('POST', '/api/admin/app-plugins/apps', { token: admin, raw: new Uint8Array(pkg), headers: { 'content-type': 'application/zip' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await s?.close();
    for (const c of cleanups) c();
  });

  let token = '';
  let cookie = '';

  test('pages.create: a real share row of kind app made by the person; refused for a folder, an unknown page, without public_pages', async () => {
    const made = await openPage(['/Docs/contract.txt', '/Docs/page.html'], { pin: '4321', max_visits: 3 });
    assert.match(made.token, /^[A-Za-z0-9_-]{16,64}$/);
    assert.equal(made.url, `https://files.example.test/s/${made.token}`);
    assert.ok(Number.isInteger(made.share_id));
    token = made.token;
    // The creator sees it among their links, as kind app with the app and the page.
    const mine = await s.api('GET', '/api/files/share', { token: uma });
    const row = mine.body.shares.find((x: any) => x.token === token);
    assert.deepEqual([row.kind, row.plugin_name, row.page_id, row.requires_pin, row.max_downloads], ['app', 'pages', 'sign', true, 3]);
    assert.equal((await openPage(['/Docs/sub'])).error, 'validation_failed');
    assert.equal((await openPage(['/Docs/contract.txt'], { page: 'nope' })).error, 'validation_failed');
    // A viewer may not share the file (editor, as for any link); an app without public_pages is refused.
    assert.equal((await openPage(['/Docs/contract.txt'], {}, vic)).error, 'forbidden');
    const bare = await buildAppPackage({ key, manifest: pagesManifest({ id: 'bare', permissions: ['files.read'] }), code: PAGES_CODE, languages: PACKS });
    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/apps', { token: admin, raw: new Uint8Array(bare), headers: { 'content-type': 'application/zip' } })).status,
      201,
    );
    const refused = await s.api('POST', '/api/files/plugins/views/bare/publisher/event', {
      token: uma,
      body: { paths: ['/Docs/contract.txt'], event: 'action', data: {} },
    });
    assert.equal(JSON.parse(refused.body.surface.nodes[0].text).error, 'app_host_refused');
    // Not a plain download link: the metadata route and the download routes do not open it.
    assert.equal((await pub('GET', `/api/files/share/${token}`)).status, 404);
    assert.equal((await pub('GET', `/api/share/${token}/download`)).status, 404);
  });

  test('the PIN gate: pin-needed, 401 pin_wrong, five wrong lock with 429, the right PIN unlocks', async () => {
    let st = await pub('GET', `/api/public/s/${token}`);
    assert.equal(st.status, 200, JSON.stringify(st.body));
    assert.deepEqual([st.body.state, st.body.revoked, st.body.requires_pin, st.body.unlocked, st.body.app], ['active', false, true, false, undefined]);
    assert.equal(st.headers.get('cache-control'), 'no-store');
    // No PIN: events and files are refused.
    let r = await event(token, {});
    assert.deepEqual([r.status, r.body.error], [401, 'unauthorised']);
    assert.equal((await pub('GET', `/api/public/s/${token}/file/f1`)).status, 401);
    r = await pub('POST', `/api/public/s/${token}/pin`, { body: { pin: '0000' } });
    assert.deepEqual([r.status, r.body.error, r.body.details.tries_left], [401, 'pin_wrong', 4]);
    r = await pub('POST', `/api/public/s/${token}/pin`, { body: { pin: '4321' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.unlocked, true);
    const set = r.headers.get('set-cookie') ?? '';
    assert.match(set, /service_page_dt=/);
    assert.match(set, new RegExp(`path=/api/public/s/${token}`, 'i'));
    assert.match(set, /httponly/i);
    assert.match(set, /samesite=strict/i);
    assert.match(set, /secure/i);
    cookie = set.split(';')[0];
    st = await pub('GET', `/api/public/s/${token}`, { cookie });
    assert.equal(st.body.unlocked, true);
    assert.deepEqual(
      st.body.app.files.map((f: any) => [f.ref, f.name, f.size]),
      [
        ['f1', 'contract.txt', 17],
        ['f2', 'page.html', 25],
      ],
    );
    assert.deepEqual([st.body.app.plugin, st.body.app.page, st.body.app.title], ['pages', 'sign', 'Sign <b>here</b>']);

    // Another page locks after five wrong answers: 429 locked, and the right PIN is refused during the lock.
    const other = (await openPage(['/Docs/contract.txt'], { pin: '1111' })).token;
    for (let i = 0; i < 4; i++) assert.equal((await pub('POST', `/api/public/s/${other}/pin`, { body: { pin: '9999' } })).status, 401);
    r = await pub('POST', `/api/public/s/${other}/pin`, { body: { pin: '9999' } });
    assert.deepEqual([r.status, r.body.error], [429, 'locked']);
    assert.ok(r.body.details.retry_after > 500, JSON.stringify(r.body));
    r = await pub('POST', `/api/public/s/${other}/pin`, { body: { pin: '1111' } });
    assert.deepEqual([r.status, r.body.error], [429, 'locked']);
    st = await pub('GET', `/api/public/s/${other}`);
    assert.ok(st.body.locked_until, JSON.stringify(st.body));
  });

  test('an empty-body event opens the page: a counted visit, a sanitised surface with refs and no open, a host cut to the exposed files', async () => {
    const r = await pub('POST', `/api/public/s/${token}/event`, { cookie, headers: { 'accept-language': 'tr-TR,tr;q=0.9' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const s1 = r.body.surface;
    assert.equal(s1.title, 'Sign contract.txt');
    assert.equal(s1.open, undefined);
    assert.ok(!JSON.stringify(r.body).includes('"open"'), JSON.stringify(r.body));
    // No creator path reaches the visitor: the exposed file is its ref, the other path is gone.
    assert.ok(!JSON.stringify(r.body).includes('/Docs/'), JSON.stringify(r.body));
    const texts = s1.nodes.filter((n: any) => n.type === 'text').map((n: any) => n.text);
    assert.deepEqual(texts, [
      'public=true files=2 lang=tr',
      'read=the contract text',
      'outside=app_host_refused write=app_host_refused pages=app_host_refused',
    ]);
    assert.deepEqual(
      s1.nodes.filter((n: any) => n.type === 'preview'),
      [{ type: 'preview', path: 'f1' }],
    );
    assert.deepEqual(s1.nodes.find((n: any) => n.type === 'list').items, [{ title: 'mine', path: 'f1' }, { title: 'not yours' }]);
    assert.equal(
      s1.nodes.some((n: any) => n.type === 'html'),
      false,
    );
    const mine = await s.api('GET', '/api/files/share', { token: uma });
    assert.equal(mine.body.shares.find((x: any) => x.token === token).downloads, 1);
    // An event with a body is not a visit.
    const e = await event(token, { event: 'change', data: { name: 'x' }, state: { a: 1 } }, cookie);
    assert.deepEqual([e.status, e.body.surface.nodes[0].text, e.body.surface.state], [200, 'event change public=true', { a: 1 }]);
    assert.equal((await s.api('GET', '/api/files/share', { token: uma })).body.shares.find((x: any) => x.token === token).downloads, 1);
    assert.deepEqual((await event(token, { event: 'explode' }, cookie)).status, 400);
    const big = await event(token, { event: 'change', data: { blob: 'x'.repeat(70 * 1024) } }, cookie);
    assert.deepEqual([big.status, big.body.error], [413, 'payload_too_large']);
  });

  test('a submit queues a job that runs as the creator: output through the write gate, attributed to the creator, no open', async () => {
    let r = await event(token, { event: 'submit', action_id: 'sign', data: {} }, cookie);
    assert.deepEqual([r.status, r.body.error], [422, 'required']);
    r = await event(token, { event: 'submit', action_id: 'sign', data: { name: 'ada' } }, cookie);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.accepted, true);
    assert.equal(r.body.surface.nodes[0].text, 'thanks ada');
    assert.ok(!JSON.stringify(r.body).includes('"open"'));
    // The op is the creator's (the visitor has no account): it finished ok, with its output and no open.
    const op = await pollOp(r.body.job_id, uma);
    assert.equal(op.status, 'ok', JSON.stringify(op));
    assert.deepEqual(op.outputs, [{ path: '/Docs/contract.signed-ada.txt' }]);
    assert.equal(op.open, undefined);
    assert.equal(readFileSync(join(docs, 'contract.signed-ada.txt'), 'utf8'), 'signed by ada');
    const list = await s.api('GET', `/api/files/manager?path=${encodeURIComponent('/Docs')}`, { token: uma });
    assert.ok(
      list.body.entries.some((e: any) => e.name === 'contract.signed-ada.txt'),
      JSON.stringify(list.body).slice(0, 300),
    );
    let audit: any[] = [];
    for (let i = 0; i < 40 && !audit.length; i++) {
      audit = (await s.api('GET', '/api/admin/audit?action=file.upload', { token: admin })).body.events.filter((e: any) =>
        String(e.resource).includes('contract.signed-ada.txt'),
      );
      if (!audit.length) await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(audit[0]?.user_email, 'uma@example.test', JSON.stringify(audit));
    // An action the app does not have: 409 link_unavailable.
    r = await event(token, { event: 'submit', action_id: 'sign', data: { name: 'ghost' } }, cookie);
    assert.deepEqual([r.status, r.body.error], [409, 'link_unavailable']);
  });

  test('an exposed file: range, inline, Content-Type, a sandboxing CSP for active types; unknown refs 404', async () => {
    let r = await fetch(`${s.url}/api/public/s/${token}/file/f1`, { headers: { cookie, range: 'bytes=4-11' } });
    assert.equal(r.status, 206);
    assert.equal(await r.text(), 'contract');
    assert.equal(r.headers.get('content-range'), 'bytes 4-11/17');
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(r.headers.get('content-disposition') ?? '', /^inline/);
    assert.match(r.headers.get('content-security-policy') ?? '', /sandbox/);
    r = await fetch(`${s.url}/api/public/s/${token}/file/f2`, { headers: { cookie } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/octet-stream');
    assert.match(r.headers.get('content-security-policy') ?? '', /sandbox/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    await r.text();
    assert.equal((await pub('GET', `/api/public/s/${token}/file/f9`, { cookie })).status, 404);
  });

  test("the visitor follows the page's job: status, message, outputs as refs only; the PIN, other ops and other pages refused", async () => {
    const follow = async (id: string, c = cookie) => {
      for (let i = 0; i < 400; i++) {
        const r = await pub('GET', `/api/public/s/${token}/ops/${id}`, { cookie: c });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.headers.get('cache-control'), 'no-store');
        if (['ok', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
        await new Promise((res) => setTimeout(res, 25));
      }
      throw new Error(`op ${id} did not finish`);
    };
    let r = await event(token, { event: 'submit', action_id: 'sign', data: { name: 'eve' } }, cookie);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const made = await follow(r.body.job_id);
    assert.deepEqual(made, { job_id: r.body.job_id, status: 'ok', progress: 1, message: 'stamped', outputs: [], output_count: 1 });
    assert.ok(existsSync(join(docs, 'contract.signed-eve.txt')));
    r = await event(token, { event: 'submit', action_id: 'sign', data: { name: 'fay', replace: true } }, cookie);
    const replaced = await follow(r.body.job_id);
    assert.deepEqual([replaced.status, replaced.outputs, replaced.output_count], ['ok', [{ ref: 'f2' }], 1], JSON.stringify(replaced));
    assert.ok(!JSON.stringify(replaced).includes('/Docs'), 'no creator path reaches the visitor');
    assert.equal(readFileSync(join(docs, 'page.html'), 'utf8'), 'signed by fay');

    const noPin = await pub('GET', `/api/public/s/${token}/ops/${r.body.job_id}`);
    assert.deepEqual([noPin.status, noPin.body.error], [401, 'unauthorised']);
    const own = await s.api('POST', '/api/files/plugins/actions/pages/stamp/run', {
      token: uma,
      body: { paths: ['/Docs/contract.txt'], params: { name: 'own' } },
    });
    assert.equal(own.status, 202, JSON.stringify(own.body));
    assert.equal((await pub('GET', `/api/public/s/${token}/ops/${own.body.op}`, { cookie })).status, 404, "the creator's own op is not the page's");
    assert.equal((await pub('GET', `/api/public/s/${token}/ops/nope`, { cookie })).status, 404);
    const other = await openPage(['/Docs/contract.txt']);
    assert.equal((await pub('GET', `/api/public/s/${other.token}/ops/${r.body.job_id}`)).status, 404, 'another page cannot follow it');
    await pollOp(own.body.op, uma);
  });

  test('the HTML page at /s/{token}: the app page under a strict CSP, no-store; a plain link still downloads', async () => {
    let r = await fetch(`${s.url}/s/${token}`, { headers: { accept: 'text/html' } });
    assert.equal(r.status, 200);
    assert.match(await r.text(), /app-page-marker/);
    const csp = r.headers.get('content-security-policy') ?? '';
    for (const part of ["default-src 'self'", "frame-ancestors 'none'", "img-src 'self' data: blob:"]) assert.ok(csp.includes(part), csp);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    // Through the public listener: the page, its API and its assets; not the admin's list.
    const outside = `http://127.0.0.1:${s.server.publicPort}`;
    assert.ok(s.server.publicPort);
    assert.match(await (await fetch(`${outside}/s/${token}`)).text(), /app-page-marker/);
    assert.equal((await fetch(`${outside}/assets/app-page.js`)).status, 200);
    assert.equal((await fetch(`${outside}/api/public/s/${token}`, { headers: { cookie } })).status, 200);
    assert.equal((await fetch(`${outside}/api/admin/app-plugins/shares`, { headers: { authorization: `Bearer ${admin}` } })).status, 404);
    const plain = await s.api('POST', '/api/files/share', { token: uma, body: { path: 'Docs://private.txt' } });
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    r = await fetch(`${s.url}/s/${plain.body.token}`);
    assert.equal(await r.text(), 'not exposed');
  });

  test('the old /p/ addresses answer 301 to /s/', async () => {
    let r = await fetch(`${s.url}/p/abc?x=1`, { redirect: 'manual' });
    assert.deepEqual([r.status, r.headers.get('location')], [301, '/s/abc?x=1']);
    r = await fetch(`${s.url}/api/p/abc/event`, { method: 'POST', redirect: 'manual' });
    assert.deepEqual([r.status, r.headers.get('location')], [301, '/api/public/s/abc/event']);
  });

  test('the admin lists app links; a person cannot', async () => {
    const r = await s.api('GET', '/api/admin/app-plugins/shares?plugin=pages&active=true&limit=1', { token: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.total >= 2, JSON.stringify(r.body));
    assert.equal(r.body.shares.length, 1);
    assert.deepEqual([r.body.shares[0].kind, r.body.shares[0].plugin_name, r.body.shares[0].owner_email], ['app', 'pages', 'uma@example.test']);
    assert.equal((await s.api('GET', '/api/admin/app-plugins/shares?plugin=other', { token: admin })).body.total, 0);
    assert.equal((await s.api('GET', '/api/admin/app-plugins/shares', { token: uma })).status, 403);
  });

  test('the creator losing access: 403 no_access; disabled: revoked and 410; re-enabled: back', async () => {
    // Access by grants only, and uma holds none: the page refuses with no_access, nothing queued.
    assert.equal((await s.api('PATCH', `/api/admin/storages/${docsId}`, { token: admin, body: { rbac_enabled: true } })).status, 200);
    let r = await event(token, { event: 'submit', data: { name: 'bob' } }, cookie);
    assert.deepEqual([r.status, r.body.error], [403, 'no_access']);
    assert.equal((await pub('GET', `/api/public/s/${token}/file/f1`, { cookie })).status, 403);
    assert.equal(existsSync(join(docs, 'contract.signed-bob.txt')), false);
    assert.equal((await s.api('PATCH', `/api/admin/storages/${docsId}`, { token: admin, body: { rbac_enabled: false } })).status, 200);

    assert.equal((await s.api('POST', `/api/admin/users/${umaId}/disable`, { token: admin })).status, 200);
    const st = await pub('GET', `/api/public/s/${token}`, { cookie });
    assert.deepEqual([st.status, st.body.state, st.body.revoked, st.body.reason, st.body.app], [200, 'revoked', true, 'creator', undefined]);
    r = await event(token, {}, cookie);
    assert.equal(r.status, 410);
    r = await event(token, { event: 'change', data: {} }, cookie);
    assert.deepEqual([r.status, r.body.error], [410, 'revoked']);
    const html = await fetch(`${s.url}/s/${token}`, { headers: { accept: 'text/html' } });
    assert.equal(html.status, 404);
    assert.match(await html.text(), /no longer available/);
    assert.equal((await s.api('POST', `/api/admin/users/${umaId}/enable`, { token: admin })).status, 200);
    uma = await s.login('uma@example.test', 'uma-password-1'); // disabling ended the sessions
    assert.equal((await pub('GET', `/api/public/s/${token}`, { cookie })).body.state, 'active');
  });

  test('max_visits caps the openings; pages.revoke ends a page', async () => {
    // Visits so far: 1 of 3.
    assert.equal((await event(token, {}, cookie)).status, 200);
    assert.equal((await event(token, {}, cookie)).status, 200);
    const capped = await event(token, {}, cookie);
    assert.equal(capped.status, 404);
    assert.equal((await pub('GET', `/api/public/s/${token}`, { cookie })).status, 404);
    const other = await openPage(['/Docs/contract.txt']);
    assert.equal((await event(other.token, {})).status, 200);
    const ended = await s.api('POST', '/api/files/plugins/views/pages/publisher/event', {
      token: uma,
      body: { paths: [], event: 'action', data: { revoke: other.token } },
    });
    assert.equal(JSON.parse(ended.body.surface.nodes[0].text).revoked, true);
    const r = await event(other.token, {});
    assert.deepEqual([r.status, r.body.error], [410, 'expired']);
  });

  test('a file gone: the state reads revoked (gone) and events answer 410', async () => {
    writeFileSync(join(docs, 'gone.txt'), 'soon gone');
    await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Docs' } });
    const made = await openPage(['/Docs/gone.txt']);
    assert.ok(made.token, JSON.stringify(made));
    assert.equal((await event(made.token, {})).status, 200);
    rmSync(join(docs, 'gone.txt'));
    const st = await pub('GET', `/api/public/s/${made.token}`);
    assert.deepEqual([st.status, st.body.state, st.body.revoked, st.body.reason], [200, 'revoked', true, 'gone']);
    const r = await event(made.token, { event: 'change', data: {} });
    assert.deepEqual([r.status, r.body.error], [410, 'revoked']);
  });

  test('an app with only an event export gets the open event there', async () => {
    const code = `app.event = async ({ view, event, paths, public: p }) => {
      if (view === 'publisher') return { nodes: [{ type: 'text', text: JSON.stringify(await host.call('pages.create', { paths: paths.map((x) => x.path), page: 'sign' })) }] };
      return { nodes: [{ type: 'text', text: 'event ' + event + ' public=' + p }] };
    };`;
    const pkg = await buildAppPackage({ key, manifest: pagesManifest({ id: 'evonly' }), code, languages: PACKS });
    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/apps', { token: admin, raw: new Uint8Array(pkg), headers: { 'content-type': 'application/zip' } })).status,
      201,
    );
    const made = await s.api('POST', '/api/files/plugins/views/evonly/publisher/event', {
      token: uma,
      body: { paths: ['/Docs/contract.txt'], event: 'action', data: {} },
    });
    const page = JSON.parse(made.body.surface.nodes[0].text).token;
    const r = await event(page, {});
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.surface.nodes[0].text, 'event open public=true');
  });

  test("a paid app's page: a held licence answers 403 store_license to events and files and queues nothing; a valid one opens it again", async () => {
    const store = generateKeyPairSync('ed25519');
    const pkg = await buildAppPackage({
      key,
      manifest: pagesManifest({ id: 'paidpages', license: { required: true, store: 'shop' } }),
      code: PAGES_CODE,
      languages: PACKS,
    });
    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/apps', { token: admin, raw: new Uint8Array(pkg), headers: { 'content-type': 'application/zip' } })).status,
      201,
    );
    const pem = store.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    assert.equal((await s.api('POST', '/api/admin/app-plugins/store-keys', { token: admin, body: { store: 'shop', public_key_pem: pem } })).status, 201);
    const lic = await s.api('PUT', '/api/admin/app-plugins/apps/paidpages/license', {
      token: admin,
      body: { token: issueLicense(store.privateKey, { id: 'lic-page', app: 'paidpages' }) },
    });
    assert.equal(lic.body.status, 'valid', JSON.stringify(lic.body));
    const made = await s.api('POST', '/api/files/plugins/views/paidpages/publisher/event', {
      token: uma,
      body: { paths: ['/Docs/contract.txt'], event: 'action', data: {} },
    });
    const page = JSON.parse(made.body.surface.nodes[0].text).token;
    assert.equal((await event(page, {})).status, 200);

    assert.equal((await s.api('POST', '/api/admin/app-plugins/license-revocations', { token: admin, body: { license_id: 'lic-page' } })).status, 201);
    const opsBefore = (await s.api('GET', '/api/files/ops', { token: uma })).body.ops.length;
    const held = { kind: 'app', reason: 'revoked', plugin: 'paidpages' };
    for (const body of [{}, { event: 'submit', action_id: 'sign', data: { name: 'zed' } }]) {
      const r = await event(page, body);
      assert.deepEqual([r.status, r.body.error, r.body.details], [403, 'store_license', held], JSON.stringify(r.body));
    }
    const f = await pub('GET', `/api/public/s/${page}/file/f1`);
    assert.deepEqual([f.status, f.body.error], [403, 'store_license']);
    assert.equal((await s.api('GET', '/api/files/ops', { token: uma })).body.ops.length, opsBefore, 'no job queued');
    assert.equal(existsSync(join(docs, 'contract.signed-zed.txt')), false);
    // The link itself lives on (the app is stopped, not removed): its state is still active.
    assert.equal((await pub('GET', `/api/public/s/${page}`)).body.state, 'active');

    assert.equal((await s.api('DELETE', '/api/admin/app-plugins/license-revocations/lic-page', { token: admin })).status, 200);
    assert.equal((await event(page, {})).status, 200);
  });

  test('the app uninstalled: events 409 link_unavailable, the state reads revoked', async () => {
    const page = (await openPage(['/Docs/contract.txt'])).token;
    assert.equal((await event(page, {})).status, 200);
    assert.equal((await s.api('DELETE', '/api/admin/app-plugins/apps/pages', { token: admin })).status, 200);
    const r = await event(page, { event: 'change', data: {} });
    assert.deepEqual([r.status, r.body.error], [409, 'link_unavailable']);
    const st = await pub('GET', `/api/public/s/${page}`);
    assert.deepEqual([st.body.state, st.body.revoked, st.body.reason], ['revoked', true, 'app_unavailable']);
    assert.equal((await fetch(`${s.url}/s/${page}`, { headers: { accept: 'text/html' } })).status, 404);
  });
});
