/**
 * The app host's second part over HTTP (docs/app-plugins.md: "Host API: locks
 * and state", "Wake-up", "Licences", "Open rules"), with real signed packages
 * in real sandboxes: an app locks a file (plain writes answer 423 with the
 * lock's details), writes it in a later job through the token the host kept,
 * marks it (the listing's `app_state`), a 33rd item is refused, an app
 * without the permissions is refused; its wake-up queues a scheduled job with
 * no person (once per key and due_at, reaching only the files it named);
 * a paid app is held until its licence is valid, and its upgrades must fall
 * within the licence's `updates_until`; open rules follow
 * permissions and the selection.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { buildAppPackage, issueLicense, publisherKey, sampleManifest } from '../helpers/app-package';

const DONE = ['ok', 'failed', 'cancelled'];

const KEEPER_CODE = String.raw`
const code = async (m, a) => { try { await host.call(m, a); return 'ok'; } catch (e) { return e.code || 'error'; } };
app.action = async ({ action, paths, params }) => {
  const path = paths[0] && paths[0].path;
  if (action === 'lock') {
    const r = await host.call('locks.set', { path, label: 'Keeper', reason: 'signing', reason_text: 'Out for signature' });
    const s = await host.call('state.set', { path, key: 'awaiting', on: true });
    const g = await host.call('locks.get', { path });
    return { message: JSON.stringify({ plugin: r.lock.plugin, items: s.items, got: g.lock && g.lock.reason }) };
  }
  if (action === 'sign') {
    await host.call('files.write', { path, data: 'signed by ' + (params.who || '?'), overwrite: true });
    return { message: 'signed' };
  }
  if (action === 'clear') {
    const c = await host.call('locks.clear', { path });
    await host.call('state.set', { path, key: 'awaiting', on: false });
    const again = await host.call('locks.clear', { path });
    return { message: JSON.stringify({ cleared: c.cleared, again: again.cleared, items: (await host.call('state.get', { path })).items }) };
  }
  if (action === 'many') {
    let last = 'ok';
    for (let i = 0; i < 33 && last === 'ok'; i++) last = await code('state.set', { path, key: 'k' + i, on: true });
    return { message: last };
  }
  if (action === 'remind') {
    const outside = await code('files.write', { path: params.outside, data: 'x', overwrite: true });
    const read = await host.call('files.read', { path });
    await host.call('files.write', { path, data: JSON.stringify({ was: read.data, probe: params.probe, outside }), overwrite: true });
    return { message: 'reminded' };
  }
  return null;
};
app.tick = async ({ now, settings }) => {
  const probe = {
    read: await code('files.read', { path: settings.path }),
    lock: await code('locks.set', { path: settings.path }),
    kvSet: await code('kv.set', { key: 'k', value: 1 }),
    kvGet: await code('kv.get', { key: 'k' }),
    ops: await code('ops.create', { action: 'sign', paths: [] }),
  };
  const items = (settings.items || []).map((it) => ({ ...it, params: { ...(it.params || {}), probe } }));
  if (settings.soon) items.push({ key: 'soon', due_at: new Date(Date.parse(now) + 500).toISOString(), action_id: 'remind', paths: [settings.path], params: { outside: settings.path } });
  for (let i = 0; i < (settings.extra || 0); i++) items.push({ key: 'later' + i, due_at: '2999-01-01T00:00:00Z', action_id: 'remind', paths: [] });
  return items;
};
`;
const KEEPER_PACK = {
  en: { 'a.lock': 'Lock', 'a.sign': 'Sign', 'a.clear': 'Clear', 'a.many': 'Many', 'a.remind': 'Remind', 'v.status': 'Status', 'o.sign': 'Sign with Keeper' },
};
const txt = { kind: 'file', ext: ['txt'] };
const keeperManifest = (over: Record<string, unknown> = {}) =>
  sampleManifest({
    id: 'keeper',
    name: 'Keeper',
    filex_range: '>=0.1.0',
    call_timeout_ms: 5000,
    permissions: ['files.read', 'files.write', 'locks', 'state', 'storage', 'schedule', 'ops'],
    actions: [
      { id: 'lock', label: 'a.lock', applies: txt, read_only_ok: true },
      { id: 'sign', label: 'a.sign', applies: { ...txt, min: 0 }, output_mode: 'replace' },
      { id: 'clear', label: 'a.clear', applies: txt, read_only_ok: true },
      { id: 'many', label: 'a.many', applies: txt, read_only_ok: true },
      { id: 'remind', label: 'a.remind', applies: { min: 0, max: 10, multi: true }, read_only_ok: true },
    ],
    views: [{ id: 'status', label: 'v.status', placement: 'panel' }],
    open: [
      { ext: ['txt'], action: 'sign', label: 'o.sign' },
      { mime: ['application/pdf'], view: 'status', default: true },
    ],
    ...over,
  });

describe('app host: locks, state, wake-up, licences, open rules', () => {
  let s: TestServer;
  let admin: string, uma: string, vic: string;
  let root: string;
  const cleanups: Array<() => void> = [];
  const key = publisherKey('acme');
  const store = generateKeyPairSync('ed25519');

  const install = async (manifest: unknown, code = KEEPER_CODE, languages: Record<string, unknown> = KEEPER_PACK) => {
    const bytes = await buildAppPackage({ key, manifest, code, languages });
    const r = await s.api('POST', '/api/admin/app-plugins/apps', { token: admin, raw: new Uint8Array(bytes), headers: { 'content-type': 'application/zip' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  };
  const person = async (username: string, role: string) => {
    const r = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: `${username}@example.test`, username, password: `${username}-password-1`, role },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return s.login(`${username}@example.test`, `${username}-password-1`);
  };
  const op = async (id: string, token = uma): Promise<any> => {
    for (let i = 0; i < 400; i++) {
      const r = await s.api('GET', `/api/files/ops/${id}`, { token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      if (DONE.includes(r.body.status)) return r.body;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`op ${id} did not finish`);
  };
  const run = async (plugin: string, action: string, paths: string[], params: unknown = {}, token = uma) => {
    const r = await s.api('POST', `/api/files/plugins/actions/${plugin}/${action}/run`, { token, body: { paths, params } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    return op(r.body.op, token);
  };
  const entry = async (name: string) => {
    const r = await s.api('GET', '/api/files/manager?path=/Docs', { token: admin });
    assert.equal(r.status, 200);
    return r.body.entries.find((e: any) => e.name === name);
  };
  const read = async (path: string) =>
    (await fetch(`${s.url}/api/files/raw?path=${encodeURIComponent(path)}`, { headers: { authorization: `Bearer ${admin}` } })).text();

  before(async () => {
    const t = tempDir('filedock-apps-host-');
    root = t.dir;
    cleanups.push(t.cleanup);
    for (const [n, body] of [
      ['contract.txt', 'the contract'],
      ['notes.txt', 'notes'],
      ['many.txt', 'many'],
      ['due.txt', 'due'],
      ['plain.txt', 'plain'],
      ['scan.pdf', '%PDF-1.4'],
    ])
      writeFileSync(join(root, n), body);
    s = await startTestServer({ SERVICE_APP_WAKEUP_INTERVAL: '1500ms', SERVICE_APP_WAKEUP_FIRST: '200ms' });
    admin = await s.login();
    uma = await person('uma', 'user');
    vic = await person('vic', 'viewer');
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    assert.ok(await entry('contract.txt')); // catalogued: a lock needs the file's row
    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/keys', { token: admin, body: { publisher: 'acme', public_key_pem: key.trusted.public_key_pem } })).status,
      201,
    );
    await install(keeperManifest());
  });
  after(async () => {
    await s.close();
    for (const c of cleanups) c();
  });

  test('an app locks a file: plain writes answer 423 with the lock; the app writes it in a later job; it clears the lock', async () => {
    const path = '/Docs/contract.txt';
    let o = await run('keeper', 'lock', [path]);
    assert.equal(o.status, 'ok', JSON.stringify(o));
    assert.deepEqual(JSON.parse(o.message), { plugin: 'keeper', items: ['keeper:awaiting'], got: 'signing' });

    const r = await s.api('POST', '/api/files/save-text', { token: admin, body: { path, content: 'overwritten' } });
    assert.equal(r.status, 423, JSON.stringify(r.body));
    assert.equal(r.body.error, 'locked');
    assert.deepEqual(r.body.details, { plugin: 'keeper', plugin_label: 'Keeper', path, reason: 'signing', reason_text: 'Out for signature', until: null });
    const form = new FormData();
    form.append('path', '/Docs');
    form.append('file', new Blob(['new bytes']), 'contract.txt');
    const up = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${uma}` } });
    assert.equal(up.status, 423);
    assert.equal((await up.json()).details.plugin, 'keeper');

    const e = await entry('contract.txt');
    assert.equal(e.locked, true);
    assert.deepEqual(e.app_state, ['keeper:awaiting']);
    assert.equal(e.lock.plugin, 'keeper');

    // The app's own later job writes the locked file (the host holds the token it got).
    o = await run('keeper', 'sign', [path], { who: 'uma' });
    assert.equal(o.status, 'ok', JSON.stringify(o));
    assert.equal(await read(path), 'signed by uma');

    o = await run('keeper', 'clear', [path]);
    assert.equal(o.status, 'ok', JSON.stringify(o));
    assert.deepEqual(JSON.parse(o.message), { cleared: true, again: false, items: [] });
    const after = await entry('contract.txt');
    assert.equal(after.locked, false);
    assert.deepEqual(after.app_state, []);
    assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path, content: 'free again' } })).status, 200);
  });

  test('a 33rd state item is refused (too_many); an app without the locks/state permissions is refused', async () => {
    const o = await run('keeper', 'many', ['/Docs/many.txt']);
    assert.equal(o.message, 'too_many');
    assert.equal((await entry('many.txt')).app_state.length, 32);

    const code = String.raw`app.action = async ({ paths }) => {
      const c = async (m, a) => { try { await host.call(m, a); return 'ok'; } catch (e) { return e.code; } };
      return { message: [await c('locks.set', { path: paths[0].path }), await c('locks.get', { path: paths[0].path }), await c('state.set', { path: paths[0].path, key: 'x', on: true })].join(',') };
    };`;
    await install(
      sampleManifest({
        id: 'plain',
        name: 'Plain',
        filex_range: '>=0.1.0',
        permissions: ['files.read'],
        actions: [{ id: 'try', label: 'a.try', applies: txt, read_only_ok: true }],
      }),
      code,
      { en: { 'a.try': 'Try' } },
    );
    const p = await run('plain', 'try', ['/Docs/plain.txt']);
    assert.equal(p.message, 'app_host_refused,app_host_refused,app_host_refused');
    assert.equal((await entry('plain.txt')).locked, false);
  });

  test('open rules: listed by permission and, with a selection, by its type', async () => {
    let r = await s.api('GET', '/api/files/plugins/actions', { token: uma });
    const mine = r.body.open_rules.filter((o: any) => o.plugin === 'keeper');
    assert.deepEqual(mine, [
      { plugin: 'keeper', ext: ['txt'], mime: [], view: null, action: 'sign', label: { en: 'Sign with Keeper' }, default: false },
      { plugin: 'keeper', ext: [], mime: ['application/pdf'], view: 'status', action: null, label: { en: 'Status' }, default: true },
    ]);
    // A viewer may not run the writing action: only the view's rule.
    r = await s.api('GET', '/api/files/plugins/actions', { token: vic });
    assert.deepEqual(
      r.body.open_rules.filter((o: any) => o.plugin === 'keeper').map((o: any) => o.view ?? o.action),
      ['status'],
    );
    r = await s.api('GET', '/api/files/plugins/actions?path=/Docs/scan.pdf', { token: uma });
    assert.deepEqual(
      r.body.open_rules.filter((o: any) => o.plugin === 'keeper').map((o: any) => o.view ?? o.action),
      ['status'],
    );
    r = await s.api('GET', '/api/files/plugins/actions?path=/Docs/notes.txt', { token: uma });
    assert.deepEqual(
      r.body.open_rules.filter((o: any) => o.plugin === 'keeper').map((o: any) => o.view ?? o.action),
      ['sign'],
    );
  });

  test('wake-up: a due item runs once as a job with no person, reaching only its own files; the read-only scope refuses writes', async () => {
    const path = '/Docs/due.txt';
    assert.equal((await run('keeper', 'lock', [path])).status, 'ok');
    const items = [
      { key: 'remind-1', due_at: '2026-01-01T00:00:00Z', action_id: 'remind', paths: [path], params: { outside: '/Docs/notes.txt' } },
      { key: 'stranger', due_at: '2026-01-01T00:00:00Z', action_id: 'remind', paths: ['/Docs/notes.txt'] }, // not marked by the app
      { key: 'future', due_at: '2999-01-01T00:00:00Z', action_id: 'remind', paths: [path] },
    ];
    const patch = await s.api('PATCH', '/api/admin/app-plugins/apps/keeper', { token: admin, body: { settings: { items, path, extra: 70 } } });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    const db = s.server.db.sqlite!;
    const runs = () => db.prepare("SELECT key, op_id FROM app_plugin_schedule_runs WHERE plugin = 'keeper'").all() as Array<{ key: string; op_id: string }>;
    // Rounds run on their own (first 200 ms after start, interval 1.5 s). A wake-up under way at the PATCH may
    // have read the old settings: wait for three wake-ups after it; the item must have run exactly once.
    const wakeAfter = async (t: string) => {
      for (let i = 0; i < 200; i++) {
        const w = db.prepare("SELECT last_at, outcome FROM app_plugin_wakeups WHERE plugin = 'keeper'").get() as
          | { last_at: string; outcome: string | null }
          | undefined;
        if (w && w.last_at > t && w.outcome) return w.last_at;
        await new Promise((res) => setTimeout(res, 50));
      }
      throw new Error('no wake-up');
    };
    let t = new Date().toISOString();
    for (let i = 0; i < 3; i++) t = await wakeAfter(t);
    const rows = runs();
    assert.deepEqual(
      rows.map((r) => r.key),
      ['remind-1'],
      'the due item ran once; the unmarked and future ones did not',
    );
    const o = await op(rows[0].op_id, admin);
    assert.equal(o.status, 'ok', JSON.stringify(o));
    assert.equal(o.plugin, 'keeper');
    const written = JSON.parse(await read(path));
    assert.equal(written.was, 'due');
    assert.equal(written.outside, 'app_host_refused'); // outside the item's files
    assert.deepEqual(written.probe, { read: 'app_host_refused', lock: 'app_host_refused', kvSet: 'app_host_refused', kvGet: 'ok', ops: 'app_host_refused' });
    // The op has no owner: the person who locked the file does not see it; an admin does.
    assert.equal((await s.api('GET', `/api/files/ops/${rows[0].op_id}`, { token: uma })).status, 404);
    const outcome = db.prepare("SELECT outcome FROM app_plugin_wakeups WHERE plugin = 'keeper'").get() as { outcome: string };
    assert.match(outcome.outcome, /9 dropped/); // 3 + 70 items: the 9 after the first 64 dropped

    // An item due half a second after its wake-up runs once it is due (a round after it), not before.
    assert.equal((await s.api('PATCH', '/api/admin/app-plugins/apps/keeper', { token: admin, body: { settings: { path, soon: true } } })).status, 200);
    for (let i = 0; i < 3; i++) t = await wakeAfter(t);
    const soon = db.prepare("SELECT due_at, ran_at, op_id FROM app_plugin_schedule_runs WHERE plugin = 'keeper' AND key = 'soon'").all() as Array<{
      due_at: string;
      ran_at: string;
      op_id: string;
    }>;
    assert.ok(soon.length >= 1, 'the soon item ran');
    for (const r of soon) assert.ok(r.ran_at >= r.due_at, `${r.ran_at} not before ${r.due_at}`);
    assert.equal((await op(soon[0].op_id, admin)).status, 'ok');
  });

  test('wake-up: a looping tick and a crashing tick are stopped and recorded; the round goes on to the other apps', async () => {
    await install(
      sampleManifest({
        id: 'spinner',
        name: 'Spinner',
        filex_range: '>=0.1.0',
        permissions: ['schedule'],
        call_timeout_ms: 300,
        actions: [{ id: 'x', label: 'a.x', read_only_ok: true }],
      }),
      'app.tick = () => { while (true) {} };',
      { en: { 'a.x': 'X' } },
    );
    await install(
      sampleManifest({
        id: 'crasher',
        name: 'Crasher',
        filex_range: '>=0.1.0',
        permissions: ['schedule'],
        actions: [{ id: 'x', label: 'a.x', read_only_ok: true }],
      }),
      'app.tick = () => { throw new Error("broke"); };',
      { en: { 'a.x': 'X' } },
    );
    const db = s.server.db.sqlite!;
    const outcome = (id: string) =>
      db.prepare('SELECT last_at, outcome FROM app_plugin_wakeups WHERE plugin = ?').get(id) as { last_at: string; outcome: string | null } | undefined;
    const t0 = new Date().toISOString();
    for (let i = 0; i < 200; i++) {
      const [sp, cr, ke] = [outcome('spinner'), outcome('crasher'), outcome('keeper')];
      if (sp?.outcome && cr?.outcome && ke && ke.last_at > t0 && ke.outcome && sp.last_at > t0) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(outcome('spinner')?.outcome, 'failed: app_failed: timeout');
    assert.equal(outcome('crasher')?.outcome, 'failed: app_failed: app_error');
    assert.ok(outcome('keeper')!.last_at > t0, 'keeper woke after the others failed');
    assert.match(outcome('keeper')!.outcome!, /^ok:/);
  });

  test('licences: a paid app is held (not listed, runs 403 store_license) until a trusted store signs a valid licence; revoked and removed licences hold it again', async () => {
    const code = 'app.action = async () => ({ message: "paid work" });';
    await install(
      sampleManifest({
        id: 'paid',
        name: 'Paid',
        filex_range: '>=0.1.0',
        permissions: ['files.read'],
        license: { required: true, store: 'shop' },
        actions: [{ id: 'work', label: 'a.work', applies: txt, read_only_ok: true }],
      }),
      code,
      { en: { 'a.work': 'Work' } },
    );
    const status = async () => (await s.api('GET', '/api/files/plugins/license/paid', { token: uma })).body;
    const listed = async () => (await s.api('GET', '/api/files/plugins/actions', { token: uma })).body.actions.some((a: any) => a.plugin === 'paid');
    const held = async (reason: string) => {
      const r = await s.api('POST', '/api/files/plugins/actions/paid/work/run', { token: uma, body: { paths: ['/Docs/notes.txt'] } });
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error, 'store_license');
      assert.deepEqual(r.body.details, { kind: 'app', reason, plugin: 'paid' });
      assert.equal(await listed(), false);
    };
    assert.deepEqual(await status(), { status: 'missing' });
    await held('missing');
    assert.equal((await s.api('GET', '/api/files/plugins/license/nope', { token: uma })).status, 404);

    const until = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const token = issueLicense(store.privateKey, { id: 'lic-7', valid_until: until, seats: 10 });
    let r = await s.api('PUT', '/api/admin/app-plugins/apps/paid/license', { token: admin, body: { token } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'unverified'); // the store's key is not trusted yet
    assert.equal((await s.api('PUT', '/api/admin/app-plugins/apps/paid/license', { token: uma, body: { token } })).status, 403);
    r = await s.api('POST', '/api/admin/app-plugins/store-keys', {
      token: admin,
      body: { store: 'shop', public_key_pem: store.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(await status(), { status: 'valid', valid_until: until });
    assert.equal(await listed(), true);
    const view = await s.api('GET', '/api/admin/app-plugins/apps/paid', { token: admin });
    assert.deepEqual([view.body.license, view.body.license_required, view.body.license_store], [{ status: 'valid', valid_until: until }, true, 'shop']);
    assert.equal((await run('paid', 'work', ['/Docs/notes.txt'])).message, 'paid work');

    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/license-revocations', { token: admin, body: { license_id: 'lic-7', note: 'refunded' } })).status,
      201,
    );
    assert.equal((await status()).status, 'revoked');
    await held('revoked');
    assert.equal((await s.api('DELETE', '/api/admin/app-plugins/license-revocations/lic-7', { token: admin })).status, 200);
    assert.equal((await status()).status, 'valid');
    r = await s.api('DELETE', '/api/admin/app-plugins/apps/paid/license', { token: admin });
    assert.deepEqual([r.status, r.body.status], [200, 'missing']);
    await held('missing');
    assert.equal((await s.api('DELETE', '/api/admin/app-plugins/apps/paid/license', { token: admin })).status, 404);

    const actions = (
      s.server.db.sqlite!.prepare("SELECT action FROM audit WHERE action LIKE 'app_plugin.license%' OR action LIKE 'app_store.%'").all() as Array<{
        action: string;
      }>
    ).map((a) => a.action);
    for (const a of ['app_plugin.license_set', 'app_plugin.license_held', 'app_plugin.license_released', 'app_plugin.license_remove', 'app_store.trust'])
      assert.ok(actions.includes(a), `${a} in ${actions.join(', ')}`);
  });

  test("updates_until: a paid app's upgrade released after it is refused (403 store_updates), an undated one too; within it, or without it, passes", async () => {
    const shop = generateKeyPairSync('ed25519');
    const code = 'app.action = async () => ({ message: "v" });';
    const manifest = (version: string, released?: string) =>
      sampleManifest({
        id: 'updater',
        name: 'Updater',
        version,
        filex_range: '>=0.1.0',
        permissions: ['files.read'],
        license: { required: true, store: 'shop-two' },
        ...(released && { released }),
        actions: [{ id: 'work', label: 'a.work', applies: txt, read_only_ok: true }],
      });
    const upgrade = async (version: string, released?: string) => {
      const bytes = await buildAppPackage({ key, manifest: manifest(version, released), code, languages: { en: { 'a.work': 'Work' } } });
      return s.api('PUT', '/api/admin/app-plugins/apps/updater/package', {
        token: admin,
        raw: new Uint8Array(bytes),
        headers: { 'content-type': 'application/zip' },
      });
    };
    const license = async (payload: Record<string, unknown>) => {
      const r = await s.api('PUT', '/api/admin/app-plugins/apps/updater/license', {
        token: admin,
        body: { token: issueLicense(shop.privateKey, { store: 'shop-two', app: 'updater', ...payload }) },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };
    const installed = async () => (await s.api('GET', '/api/admin/app-plugins/apps/updater', { token: admin })).body.version;
    await install(manifest('1.0.0', '2026-01-10'), code, { en: { 'a.work': 'Work' } });
    assert.equal(
      (
        await s.api('POST', '/api/admin/app-plugins/store-keys', {
          token: admin,
          body: { store: 'shop-two', public_key_pem: shop.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
        })
      ).status,
      201,
    );
    const until = '2026-06-30T23:59:59.000Z';
    assert.deepEqual(await license({ id: 'lic-u', updates_until: until }), { status: 'valid', updates_until: until });

    let r = await upgrade('1.1.0', '2026-06-30');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    r = await upgrade('1.2.0', '2026-07-01');
    assert.deepEqual(
      [r.status, r.body.error, r.body.details],
      [403, 'store_updates', { kind: 'app', reason: 'updates_until', plugin: 'updater', updates_until: until, released: '2026-07-01' }],
    );
    r = await upgrade('1.2.0');
    assert.deepEqual([r.status, r.body.error, r.body.details?.field], [400, 'validation_failed', 'released']);
    assert.equal(await installed(), '1.1.0', 'a refused upgrade keeps the installed version');
    assert.equal((await run('updater', 'work', ['/Docs/notes.txt'])).message, 'v', 'and it keeps running');

    // A licence without updates_until covers every release.
    assert.deepEqual(await license({ id: 'lic-u2' }), { status: 'valid' });
    assert.equal((await upgrade('1.2.0', '2026-07-01')).status, 200);
    assert.equal(await installed(), '1.2.0');
  });

  test('uninstalling an app lets go of the locks it set', async () => {
    assert.equal((await entry('due.txt')).locked, true);
    const r = await s.api('DELETE', '/api/admin/app-plugins/apps/keeper', { token: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await entry('due.txt')).locked, false);
    assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/due.txt', content: 'free' } })).status, 200);
  });
});
