/**
 * The document editor integration over HTTP against the fake document server
 * (test/helpers/fake-docserver.ts): the signed descriptor, the signed fetch
 * URL, the save callback (snapshot, write gate event, scans), the issue's
 * bad-input list, and fault scenario 13 (status 2 twice, status 6 repeated,
 * replayed older callbacks: one snapshot per write, the newest wins).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jwtVerify, SignJWT, UnsecuredJWT } from 'jose';
import { docKey, signFetch } from '../../server/docserver';
import { FakeDocserver, type EditorSession } from '../helpers/fake-docserver';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const SECRET = 'shared-docserver-secret-2';
const MAX_UPLOAD = 1024 * 1024;

describe('docserver: editor descriptor, fetch and save callback', () => {
  let s: TestServer;
  let admin: string;
  let viewer: string;
  let root: string;
  let roRoot: string;
  let fake: FakeDocserver;
  const cleanups: Array<() => void> = [];

  before(async () => {
    let c;
    ({ dir: root, cleanup: c } = tempDir('filedock-dse-'));
    cleanups.push(c);
    ({ dir: roRoot, cleanup: c } = tempDir('filedock-dse-ro-'));
    cleanups.push(c);
    writeFileSync(join(roRoot, 'fixed.docx'), 'read-only bytes');
    fake = await new FakeDocserver(SECRET).start();
    s = await startTestServer({ SERVICE_LIMITS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
    admin = await s.login();
    for (const [name, path] of [
      ['Docs', root],
      ['Archive', roRoot],
    ]) {
      // Polled, not watched: a watcher's re-check racing a save could record a node first and turn the gate's event into another kind.
      const st = await s.api('POST', '/api/admin/storages', {
        token: admin,
        body: { rbac_enabled: false, name, driver: 'local', config: { path }, sync_mode: 'poll' },
      });
      assert.equal(st.status, 200, JSON.stringify(st.body));
    }
    const archive = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages.find((x: any) => x.name === 'Archive');
    assert.equal((await s.api('PUT', `/api/admin/storages/${archive.id}`, { token: admin, body: { name: 'Archive', read_only: true } })).status, 200);
    await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'v@example.test', username: 'v1', password: 'viewer-password-1', role: 'viewer' } });
    viewer = await s.login('v@example.test', 'viewer-password-1');
    // Scanning on (an address nobody answers: scans are queued and fail, which is all these tests look at).
    const av = await s.api('PATCH', '/api/admin/protection', { token: admin, body: { av_enabled: true, av_mode: 'daemon', av_clamd_addr: '127.0.0.1:1' } });
    assert.equal(av.status, 200, JSON.stringify(av.body));
  });
  after(async () => {
    await s.close();
    await fake.stop();
    for (const c of cleanups) c();
  });

  const configure = () => s.api('PUT', '/api/admin/external/docserver', { token: admin, body: { url: fake.url, jwt_secret: SECRET } });
  const descriptor = (path: string, token = admin, extra = '') =>
    s.api('GET', `/api/files/docserver/config?path=${encodeURIComponent(path)}${extra}`, { token });
  const newDoc = async (name: string, type = 'docx') => {
    const r = await s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs', name, type } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.entry;
  };
  const open = async (path: string): Promise<EditorSession> => {
    const d = await descriptor(path);
    assert.equal(d.status, 200, JSON.stringify(d.body));
    return fake.open(d.body);
  };
  const versions = async (path: string) =>
    (await s.api('GET', `/api/files/versions?path=${encodeURIComponent(path)}`, { token: admin })).body.versions.length as number;
  const updates = (rel: string) =>
    (s.server.db.sqlite!.prepare("SELECT payload FROM outbox WHERE event = 'file.updated'").all() as Array<{ payload: string }>)
      .map((r) => JSON.parse(r.payload))
      .filter((p) => p.node.path === rel);
  const scans = (rel: string) =>
    (s.server.db.sqlite!.prepare("SELECT * FROM ops WHERE kind = 'av.scan'").all() as any[]).filter((o) => JSON.parse(o.payload).path === rel);
  const later = (rel: string) => scans(rel).filter((o) => Date.parse(o.run_at) > Date.now() + 60_000);
  const disk = (rel: string) => readFileSync(join(root, rel));

  /** Callbacks from a stranger (issue 39 item 6): no token, a token signed with a guessed secret, an unsigned one. */
  const strangerCallbacks = async (node: number) => {
    const body = { key: `${node}-x`, status: 2, url: `${fake.url}/x.docx`, lastsave: new Date().toISOString() };
    const forged = await new SignJWT(body).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('a-guessed-secret'));
    const unsigned = new UnsecuredJWT(body).encode();
    const url = `${s.url}/api/files/docserver/callback?node=${node}`;
    const sends: Array<[string, RequestInit]> = [
      ['no token', { body: JSON.stringify(body) }],
      ['forged token in the body', { body: JSON.stringify({ ...body, token: forged }) }],
      ['forged token in the header', { body: JSON.stringify(body), headers: { authorization: `Bearer ${forged}` } }],
      ['unsigned token', { body: JSON.stringify({ ...body, token: unsigned }) }],
    ];
    const out: Array<{ name: string; status: number; body: any }> = [];
    for (const [name, init] of sends) {
      const r = await fetch(url, { method: 'POST', ...init, headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
      out.push({ name, status: r.status, body: await r.json() });
    }
    return out;
  };
  let unconfiguredAnswers: Array<{ name: string; status: number; body: any }> = [];

  test('not configured: the editor answers "docserver: not configured"; a callback that does not verify is 401, never 503', async () => {
    const r = await descriptor('/Docs/a.docx');
    assert.equal(r.status, 503);
    assert.equal(r.body.error, 'not_configured');
    assert.equal(r.body.message, 'docserver: not configured');
    unconfiguredAnswers = await strangerCallbacks(1);
    for (const a of unconfiguredAnswers) {
      assert.equal(a.status, 401, `${a.name}: ${JSON.stringify(a.body)}`);
      assert.equal(a.body.error, 'unauthorised', a.name);
      assert.ok(!JSON.stringify(a.body).includes('configured'), `${a.name}: nothing about the configuration`);
    }
    assert.equal((await configure()).status, 200);
    // Configured, the same strangers get the same answers, word for word.
    assert.deepEqual(await strangerCallbacks(1), unconfiguredAnswers);
  });

  test('descriptor: signed HS256 config with key, title, type, permissions, user, lang, fetch and callback URLs', async () => {
    const entry = await newDoc('letter');
    const r = await descriptor('/Docs/letter.docx');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.docserver_url, fake.url);
    assert.equal(r.body.api_url, `${fake.url}/web-apps/apps/api/documents/api.js`);
    assert.equal(r.body.edit, true);
    const { token, ...config } = r.body.config;
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(SECRET), { algorithms: ['HS256'] });
    assert.equal(protectedHeader.alg, 'HS256');
    assert.deepEqual((payload as any).document, config.document);
    assert.equal(config.documentType, 'word');
    assert.equal(config.document.fileType, 'docx');
    assert.equal(config.document.title, 'letter.docx');
    assert.match(config.document.key, new RegExp(`^${r.body.node_id}-`));
    assert.equal(entry.name, 'letter.docx');
    assert.equal(config.document.permissions.edit, true);
    assert.equal(config.editorConfig.mode, 'edit');
    assert.equal(config.editorConfig.lang, 'en');
    assert.equal(config.editorConfig.user.id, '1');
    assert.ok(config.editorConfig.user.name);
    assert.equal(config.editorConfig.callbackUrl, `${s.url}/api/files/docserver/callback?node=${r.body.node_id}`);
    assert.match(config.document.url, new RegExp(`^${s.url}/api/files/docserver/fetch\\?node=${r.body.node_id}&tenant=1&exp=\\d+&sig=`));
    assert.equal((await descriptor('/Docs/letter.docx', admin, '&lang=tr')).body.config.editorConfig.lang, 'tr');
    // 200 in a row all answer; how fast is bench/docserver.ts's to measure (a timed assertion here would only
    // measure the CI machine's load).
    for (let i = 0; i < 200; i++) assert.equal((await descriptor('/Docs/letter.docx')).status, 200);
  });

  test('descriptor: groups, 415 for other extensions, view only for viewers and read-only storages, 401/404', async () => {
    for (const [ext, type] of [
      ['xlsx', 'cell'],
      ['pptx', 'slide'],
      ['odt', 'word'],
      ['ods', 'cell'],
      ['odp', 'slide'],
    ]) {
      await newDoc(`g-${ext}`, ext);
      assert.equal((await descriptor(`/Docs/g-${ext}.${ext}`)).body.config.documentType, type);
    }
    const zip = await descriptor('/Docs/archive.zip');
    assert.equal(zip.status, 415);
    assert.equal(zip.body.error, 'unsupported_media_type');
    assert.equal((await descriptor('/Docs/noext')).status, 415);
    const v = await descriptor('/Docs/letter.docx', viewer);
    assert.equal(v.status, 200, JSON.stringify(v.body));
    assert.equal(v.body.edit, false);
    assert.equal(v.body.config.document.permissions.edit, false);
    assert.equal(v.body.config.editorConfig.mode, 'view');
    assert.notEqual(v.body.config.editorConfig.user.id, '1', 'the viewer is the user');
    await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Archive' } });
    await s.api('GET', '/api/files/manager?path=/Archive', { token: admin });
    const ro = await descriptor('/Archive/fixed.docx');
    assert.equal(ro.status, 200, JSON.stringify(ro.body));
    assert.equal(ro.body.edit, false, 'a read-only storage opens in view mode');
    assert.equal((await s.api('GET', '/api/files/docserver/config?path=/Docs/letter.docx')).status, 401);
    assert.equal((await descriptor('/Docs/missing.docx')).status, 404);
  });

  test('fetch: the signed URL streams the bytes; tampered, expired, unknown node and missing object are refused with their reason', async () => {
    const session = await open('/Docs/letter.docx');
    assert.deepEqual(session.bytes, disk('letter.docx'));
    const d = (await descriptor('/Docs/letter.docx')).body;
    const url = new URL(d.config.document.url);
    const sig = url.searchParams.get('sig')!;
    const tampered = new URL(url);
    tampered.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    const refusal = async (u: string | URL) => {
      const r = await fetch(u);
      return { status: r.status, reason: ((await r.json()) as any).details?.reason };
    };
    assert.deepEqual(await refusal(tampered), { status: 403, reason: 'signature refused: tampered' });
    const other = new URL(url);
    other.searchParams.set('node', String(d.node_id + 1));
    assert.deepEqual(await refusal(other), { status: 403, reason: 'signature refused: tampered' });
    const longer = new URL(url);
    longer.searchParams.set('exp', String(Number(url.searchParams.get('exp')) + 3600));
    assert.deepEqual(await refusal(longer), { status: 403, reason: 'signature refused: tampered' });
    const key = s.server.services.secretKey;
    assert.deepEqual(await refusal(`${s.url}/api/files/docserver/fetch?${signFetch(key, { node: d.node_id }, Date.now() - 2 * 3_600_000)}`), {
      status: 403,
      reason: 'signature refused: expired',
    });
    assert.deepEqual(await refusal(`${s.url}/api/files/docserver/fetch?${signFetch(key, { node: 999999 })}`), { status: 404, reason: 'no catalogue row' });
    assert.deepEqual(await refusal(`${s.url}/api/files/docserver/fetch?sig=x&exp=1`), { status: 403, reason: 'signature refused: no subject' });
    const gone = await newDoc('gone');
    const gd = (await descriptor('/Docs/gone.docx')).body;
    rmSync(join(root, 'gone.docx'));
    assert.deepEqual(await refusal(gd.config.document.url), { status: 404, reason: 'object not on the storage' });
    assert.ok(gone);
  });

  test('tenants: the key and the fetch URL name the node’s tenant; signed for another tenant, the node is not found', async () => {
    const entry = await newDoc('tenanted');
    const session = await open('/Docs/tenanted.docx');
    assert.match(session.key, new RegExp(`^${entry.id}-t1-`));
    const url = new URL(session.config.document.url);
    assert.equal(url.searchParams.get('tenant'), '1');
    const key = s.server.services.secretKey;
    const refusal = async (u: string) => {
      const r = await fetch(u);
      return { status: r.status, reason: ((await r.json()) as any).details?.reason };
    };
    assert.deepEqual(await refusal(`${s.url}/api/files/docserver/fetch?${signFetch(key, { node: entry.id, tenant_id: 2 })}`), {
      status: 404,
      reason: 'no catalogue row',
    });
    const other = new URL(url);
    other.searchParams.set('tenant', '2');
    assert.deepEqual(await refusal(other.href), { status: 403, reason: 'signature refused: tampered' });
    // A URL signed before URLs carried the tenant still fetches (tenant 1's node) until it expires.
    const legacy = await fetch(`${s.url}/api/files/docserver/fetch?${signFetch(key, { node: entry.id })}`);
    assert.equal(legacy.status, 200);
    assert.deepEqual(Buffer.from(await legacy.arrayBuffer()), disk('tenanted.docx'));
    // A save whose key names another tenant finds no node there: refused like a missing one, nothing written.
    const before = disk('tenanted.docx');
    const theirs = docKey(key, { node: entry.id, tenant_id: 2 }, 'any-etag');
    const r = await fake.callback(session, 2, { url: fake.revision(Buffer.from('not theirs')), key: theirs });
    assert.equal(r.status, 404, JSON.stringify(r.body));
    assert.equal(r.body.details.reason, 'no catalogue row');
    assert.deepEqual(disk('tenanted.docx'), before);
    assert.deepEqual((await fake.save(session, 2, Buffer.from('saved in its tenant'))).body, { error: 0 });
    assert.equal(disk('tenanted.docx').toString(), 'saved in its tenant');
  });

  test('status 2 writes the revision: snapshot first, new bytes, file.updated from the document server with no actor, scan at once', async () => {
    await newDoc('report');
    const before = disk('report.docx');
    const session = await open('/Docs/report.docx');
    const edited = Buffer.concat([session.bytes, Buffer.from('edited once')]);
    const t0 = performance.now();
    const r = await fake.save(session, 2, edited);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { error: 0 });
    assert.ok(performance.now() - t0 < 2000);
    assert.deepEqual(disk('report.docx'), edited);
    assert.equal(await versions('/Docs/report.docx'), 1);
    const snap = (await s.api('GET', '/api/files/versions?path=/Docs/report.docx', { token: admin })).body.versions[0];
    assert.equal(snap.size, before.length);
    const ev = updates('report.docx');
    assert.equal(ev.length, 1);
    assert.equal(ev[0].actor, null);
    assert.equal(ev[0].meta.origin, 'docserver');
    assert.equal(ev[0].meta.status, 2);
    const bell = (await s.api('GET', '/api/notifications', { token: admin })).body;
    assert.ok(JSON.stringify(bell).includes('Document saved from the editor'), 'admins see the save in the bell');
    const listing = (await s.api('GET', '/api/files/manager?path=/Docs', { token: admin })).body.entries.find((e: any) => e.name === 'report.docx');
    assert.equal(listing.size, edited.length);
    assert.equal(scans('report.docx').length, 2, 'one scan for the new file, one at once for the save');
    assert.equal(later('report.docx').length, 0);
    // The key follows the bytes: a new session gets a new key.
    assert.notEqual((await descriptor('/Docs/report.docx')).body.config.document.key, session.key);
    // The header form of the token (payload nested) works too.
    const second = await open('/Docs/report.docx');
    const again = Buffer.from('second session');
    assert.deepEqual((await fake.save(second, 2, again, { via: 'header' })).body, { error: 0 });
    assert.deepEqual(disk('report.docx'), again);
    assert.equal(await versions('/Docs/report.docx'), 2);
  });

  test('a version snapshot that cannot be taken refuses the save: nothing written, nothing announced', async () => {
    await newDoc('unkept');
    const session = await open('/Docs/unkept.docx');
    const before = disk('unkept.docx');
    const kept = join(root, '.versions');
    renameSync(kept, `${kept}-aside`);
    writeFileSync(kept, 'a file where the versions folder should be');
    try {
      const r = await fake.save(session, 2, Buffer.from('would lose the old bytes'));
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.match(r.body.details.reason, /^version snapshot or write failed/);
      assert.notDeepEqual(r.body, { error: 0 });
    } finally {
      rmSync(kept);
      renameSync(`${kept}-aside`, kept);
    }
    assert.deepEqual(disk('unkept.docx'), before);
    assert.equal(updates('unkept.docx').length, 0);
    // Once snapshots work again the document server's retry lands.
    assert.deepEqual((await fake.save(session, 2, Buffer.from('kept now'))).body, { error: 0 });
    assert.equal(await versions('/Docs/unkept.docx'), 1);
  });

  test('a save to a read-only storage is refused as read_only, even with a valid token', async () => {
    const session = await open('/Archive/fixed.docx');
    assert.equal(session.bytes.toString(), 'read-only bytes');
    const r = await fake.save(session, 2, Buffer.from('changed'));
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal(r.body.error, 'read_only');
    assert.equal(readFileSync(join(roRoot, 'fixed.docx'), 'utf8'), 'read-only bytes');
  });

  test('statuses 1, 3, 4 and 7 write nothing and announce nothing', async () => {
    await newDoc('quiet');
    const session = await open('/Docs/quiet.docx');
    const before = disk('quiet.docx');
    for (const status of [1, 3, 4, 7]) {
      const r = await fake.callback(session, status, { url: fake.revision(Buffer.from('should not land')) });
      assert.deepEqual(r.body, { error: 0 }, `status ${status}`);
    }
    assert.deepEqual(disk('quiet.docx'), before);
    assert.equal(await versions('/Docs/quiet.docx'), 0);
    assert.equal(updates('quiet.docx').length, 0);
  });

  test('bad input: wrong secret, alg none, expired, another node, foreign or private URL, over the upload limit, unknown status: refused, nothing written', async () => {
    await newDoc('target');
    await newDoc('elsewhere');
    const session = await open('/Docs/target.docx');
    const other = await open('/Docs/elsewhere.docx');
    const before = disk('target.docx');
    const good = fake.revision(Buffer.from('forged content'));
    const port = new URL(fake.url).port;
    const cases: Array<[string, () => Promise<{ status: number; body: any }>, number]> = [
      ['wrong secret', () => fake.callback(session, 2, { url: good, secret: 'not-the-secret' }), 401],
      ['alg none', () => fake.callback(session, 2, { url: good, alg: 'none' }), 401],
      ['expired', () => fake.callback(session, 2, { url: good, expiresIn: -60 }), 401],
      [
        'no token',
        () =>
          fake.post(session.callbackUrl, {
            body: { key: session.key, status: 2, url: good, lastsave: new Date().toISOString() },
            headers: { 'content-type': 'application/json' },
          }),
        401,
      ],
      ['another node', () => fake.callback(session, 2, { url: good, key: other.key }), 403],
      ['another node (header form)', () => fake.callback(session, 2, { url: good, key: other.key, via: 'header' }), 403],
      ['another host', () => fake.callback(session, 2, { url: `http://127.0.0.2:${port}/cache/files/1/output.docx` }), 403],
      ['another port', () => fake.callback(session, 2, { url: `http://127.0.0.1:1/x.docx` }), 403],
      ['a private address', () => fake.callback(session, 2, { url: 'http://169.254.169.254/latest/meta-data/' }), 403],
      ['another scheme', () => fake.callback(session, 2, { url: 'file:///etc/passwd' }), 403],
      ['2 GiB revision', () => fake.callback(session, 2, { url: fake.hugeRevision(2 * 1024 ** 3) }), 413],
      ['just over the limit', () => fake.save(session, 2, Buffer.alloc(MAX_UPLOAD + 1, 1)), 413],
      [
        'over the limit, no length declared',
        () => fake.callback(session, 2, { url: fake.revision(Buffer.alloc(MAX_UPLOAD + 1, 1), 'docx', { chunked: true }) }),
        413,
      ],
      ['unknown status', () => fake.callback(session, 5, { url: good }), 400],
      ['no url', () => fake.callback(session, 2), 400],
    ];
    for (const [name, send, status] of cases) {
      const r = await send();
      assert.equal(r.status, status, `${name}: ${JSON.stringify(r.body)}`);
      assert.notDeepEqual(r.body, { error: 0 }, name);
      assert.ok(r.body.details?.reason || r.body.message, `${name}: a reason`);
    }
    assert.deepEqual(disk('target.docx'), before);
    assert.equal(await versions('/Docs/target.docx'), 0);
    assert.equal(updates('target.docx').length, 0);
    assert.deepEqual(
      readdirSync(s.server.dirs.staging).filter((n) => n.startsWith('docserver-')),
      [],
      'no download left behind',
    );
    // The refused session can still save for real afterwards.
    assert.deepEqual((await fake.save(session, 2, Buffer.from('real save'))).body, { error: 0 });
    assert.equal(disk('target.docx').toString(), 'real save');
  });

  test('scenario 13: status 6 repeatedly, status 2 twice, replayed older callbacks: one snapshot per write, newest wins, scans debounced', async () => {
    // Keep every version (unset trims to 20 per file), so each snapshot can be counted.
    assert.equal((await s.api('PATCH', '/api/admin/protection', { token: admin, body: { versions_keep_n: 0 } })).status, 200);
    await newDoc('busy');
    const session = await open('/Docs/busy.docx');
    const t0 = Date.now();
    const at = (i: number) => new Date(t0 + i * 1000);
    const firstSix = await fake.callbackRequest(session, 6, { url: fake.revision(Buffer.from('force save 0')), lastsave: at(0) });
    assert.deepEqual((await fake.post(session.callbackUrl, firstSix)).body, { error: 0 });
    // Status 6 "every second for a minute": 60 force saves, their lastsave one second apart, sent back to back.
    for (let i = 1; i < 60; i++) assert.deepEqual((await fake.save(session, 6, Buffer.from(`force save ${i}`), { lastsave: at(i) })).body, { error: 0 });
    assert.equal(disk('busy.docx').toString(), 'force save 59');
    assert.equal(await versions('/Docs/busy.docx'), 60, 'one snapshot per write');
    assert.equal(updates('busy.docx').length, 60);
    assert.equal(later('busy.docx').length, 1, 'force saves share one scan, a save-scan window later');
    const bellRows = () =>
      (s.server.db.sqlite!.prepare("SELECT count(*) AS n FROM notifications WHERE event = 'file.updated' AND body LIKE '%busy.docx'").get() as { n: number }).n;
    assert.equal(bellRows(), 0, 'force saves do not ring the bell');
    const immediate = scans('busy.docx').length - 1;

    const final = await fake.callbackRequest(session, 2, { url: fake.revision(Buffer.from('final')), lastsave: at(60) });
    assert.deepEqual((await fake.post(session.callbackUrl, final)).body, { error: 0 });
    assert.equal(disk('busy.docx').toString(), 'final');
    assert.equal(scans('busy.docx').length - 1, immediate + 1, 'the final save scans at once');
    // Status 2 again for the same session, and the first force save replayed: answered, nothing written.
    assert.deepEqual((await fake.post(session.callbackUrl, final)).body, { error: 0 });
    assert.deepEqual((await fake.post(session.callbackUrl, firstSix)).body, { error: 0 });
    assert.equal(disk('busy.docx').toString(), 'final');
    assert.equal(await versions('/Docs/busy.docx'), 61);
    assert.equal(updates('busy.docx').length, 61);

    // A newer session saves; the older session's final callback replayed afterwards is refused.
    const next = await open('/Docs/busy.docx');
    assert.notEqual(next.key, session.key);
    assert.deepEqual((await fake.save(next, 2, Buffer.from('newer session'), { lastsave: at(70) })).body, { error: 0 });
    const stale = await fake.post(session.callbackUrl, final);
    assert.equal(stale.status, 409);
    const staleLater = await fake.save(session, 6, Buffer.from('old session, later clock'), { lastsave: at(80) });
    assert.equal(staleLater.status, 409);
    assert.equal(disk('busy.docx').toString(), 'newer session');
    assert.equal(await versions('/Docs/busy.docx'), 62);

    // Concurrent force saves of one session: run one at a time; the newest revision wins.
    const third = await open('/Docs/busy.docx');
    const reqs = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => fake.callbackRequest(third, 6, { url: fake.revision(Buffer.from(`concurrent ${i}`)), lastsave: at(90 + i) })),
    );
    const answers = await Promise.all(reqs.reverse().map((q) => fake.post(third.callbackUrl, q)));
    for (const a of answers) assert.deepEqual(a.body, { error: 0 });
    assert.equal(disk('busy.docx').toString(), 'concurrent 5');
    const written = updates('busy.docx').length - 62;
    assert.ok(written >= 1 && written <= 5);
    assert.equal(await versions('/Docs/busy.docx'), 62 + written, 'one snapshot per write');
  });
});
