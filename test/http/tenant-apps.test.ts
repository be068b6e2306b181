/**
 * Apps per tenant over HTTP (docs/tenants.md, "Step 1: apps"): two tenants install the same app id, each with
 * its own settings and key-value storage, and neither finds, changes nor removes the other's; a public page of
 * one tenant's app is found on its host only; the trust lists and the app store are the platform operator's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { addTenantRow, onHost, type HostAnswer } from '../helpers/tenants';
import { buildAppPackage, publisherKey, sampleManifest } from '../helpers/app-package';

const SAME = { email: 'ann@example.test', password: 'same-password-1' };
const APP = 'twin';
/** Answers what it holds (its settings, its `k`), stores `data.set`, and opens a page over the selection on `data.page`. */
const CODE = String.raw`
const show = async (settings) => ({ nodes: [{ type: 'text', text: JSON.stringify({ settings, kv: await host.call('kv.get', { key: 'k' }) }) }] });
app.view = async ({ settings }) => show(settings);
app.event = async ({ data, paths, settings }) => {
  if (data.set) await host.call('kv.set', { key: 'k', value: data.set });
  if (data.page) return { nodes: [{ type: 'text', text: JSON.stringify(await host.call('pages.create', { paths: paths.map((p) => p.path), page: 'sign' })) }] };
  return show(settings);
};
`;
/** Marks a file for itself (a person's action); its wake-up asks for `remind` on the file its settings name. */
const TICKER_CODE = String.raw`
app.action = async ({ action, paths }) => {
  if (action === 'mark') await host.call('state.set', { path: paths[0].path, key: 'due', on: true });
  if (action === 'remind') await host.call('files.write', { path: paths[0].path, data: 'reminded', overwrite: true });
  return { message: action };
};
app.tick = async ({ settings }) => (settings.path ? [{ key: 'k', due_at: '2026-01-01T00:00:00Z', action_id: 'remind', paths: [settings.path] }] : []);
`;
const txt = { kind: 'file', ext: ['txt'] };
const TICKER = sampleManifest({
  id: 'ticker',
  call_timeout_ms: 5000,
  permissions: ['files.read', 'files.write', 'state', 'schedule'],
  actions: [
    { id: 'mark', label: 'a.mark', applies: txt, read_only_ok: true },
    { id: 'remind', label: 'a.remind', applies: txt, output_mode: 'replace' },
  ],
});
const MANIFEST = sampleManifest({
  id: APP,
  permissions: ['files.read', 'storage', 'public_pages'],
  actions: [],
  views: [
    { id: 'panel', label: 'v.panel', placement: 'dialog', applies: { multi: true, min: 0 } },
    { id: 'sign', label: 'v.sign', placement: 'page' },
  ],
});

describe('tenants: apps', () => {
  let s: TestServer;
  let operator: string;
  const key = publisherKey('acme');
  const cleanups: Array<() => void> = [];
  const t: Record<'alpha' | 'beta', { id: number; on: ReturnType<typeof onHost>; token: string }> = {} as never;

  const ok = (r: HostAnswer, what: string) => {
    assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  /** What the tenant's app holds: its settings and its `k`, as its panel shows them. */
  const holds = async (who: 'alpha' | 'beta', data: Record<string, unknown> = {}) => {
    const r = ok(
      await t[who].on('POST', `/api/files/plugins/views/${APP}/panel/event`, { token: t[who].token, body: { event: 'action', data } }),
      `${who}'s panel`,
    );
    return JSON.parse(r.surface.nodes[0].text);
  };

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1', SERVICE_APP_WAKEUP_INTERVAL: '1500ms', SERVICE_APP_WAKEUP_FIRST: '200ms' });
    operator = await s.login();
    ok(await s.api('POST', '/api/admin/app-plugins/keys', { token: operator, body: key.trusted }), 'the operator trusts the publisher');
    const pkg = await buildAppPackage({ key, manifest: MANIFEST, code: CODE, languages: { en: { 'v.panel': 'Panel', 'v.sign': 'Sign' } } });
    for (const slug of ['alpha', 'beta'] as const) {
      const host = `${slug}.example.test`;
      const id = await addTenantRow(s, slug, [host]);
      await s.server.services.auth.users.create({ tenant_id: id }, { ...SAME, role: 'admin' });
      const on = onHost(s, host);
      const token = ok(await on('POST', '/api/auth/login', { body: SAME }), `${slug} sign-in`).token as string;
      t[slug] = { id, on, token };
      const dir = tempDir(`filedock-tenant-apps-${slug}-`);
      cleanups.push(dir.cleanup);
      writeFileSync(join(dir.dir, 'contract.txt'), `${slug} contract`);
      ok(
        await on('POST', '/api/admin/storages', { token, body: { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: dir.dir } } }),
        'storage',
      );
      // The same app id in both tenants: a package is a raw body, sent through the tenant's prefix.
      const r = await s.api('POST', `/t/${slug}/api/admin/app-plugins/apps`, {
        token,
        raw: new Uint8Array(pkg),
        headers: { 'content-type': 'application/zip' },
      });
      assert.equal(r.status, 201, `${slug} installs ${APP}: ${JSON.stringify(r.body)}`);
    }
  });
  after(async () => {
    await s?.close();
    for (const c of cleanups) c();
  });

  test('the same app id in two tenants: each its own settings and key-value storage; tenant 1 has neither', async () => {
    for (const who of ['alpha', 'beta'] as const)
      ok(await t[who].on('PATCH', `/api/admin/app-plugins/apps/${APP}`, { token: t[who].token, body: { settings: { who } } }), `${who} settings`);
    await holds('alpha', { set: 'alpha value' });
    await holds('beta', { set: 'beta value' });
    assert.deepEqual(await holds('alpha'), { settings: { who: 'alpha' }, kv: 'alpha value' });
    assert.deepEqual(await holds('beta'), { settings: { who: 'beta' }, kv: 'beta value' });
    const own = ok(await t.alpha.on('GET', `/api/admin/app-plugins/apps/${APP}`, { token: t.alpha.token }), 'alpha reads its app');
    assert.deepEqual(own.settings, { who: 'alpha' });
    assert.deepEqual((await s.api('GET', '/api/admin/app-plugins/apps', { token: operator })).body.apps, [], "tenant 1's list has neither tenant's app");
    assert.equal((await s.api('GET', `/api/admin/app-plugins/apps/${APP}`, { token: operator })).status, 404);
  });

  test("a tenant's public page is found on its host only; removing its app leaves the other tenant's", async () => {
    // The file must be catalogued before a page can expose it.
    for (let i = 0; ; i++) {
      const l = await t.beta.on('GET', '/api/files/manager?path=/Docs', { token: t.beta.token });
      if (l.status === 200 && (l.body.entries as Array<{ name: string }>).some((e) => e.name === 'contract.txt')) break;
      assert.ok(i < 1200, `beta's storage catalogued: ${JSON.stringify(l.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const made = ok(
      await t.beta.on('POST', `/api/files/plugins/views/${APP}/panel/event`, {
        token: t.beta.token,
        body: { event: 'action', paths: ['/Docs/contract.txt'], data: { page: true } },
      }),
      'beta opens a page',
    );
    const page = JSON.parse(made.surface.nodes[0].text) as { token: string };
    assert.match(page.token, /^[A-Za-z0-9_-]{16,64}$/, JSON.stringify(page));
    const onBeta = ok(await t.beta.on('GET', `/api/public/s/${page.token}`), "the page on beta's host");
    assert.equal(onBeta.app?.plugin, APP);
    const onAlpha = await t.alpha.on('GET', `/api/public/s/${page.token}`);
    const missing = await t.alpha.on('GET', '/api/public/s/missingmissingmissing1');
    assert.deepEqual([onAlpha.status, onAlpha.body?.error], [missing.status, missing.body?.error], "on alpha's host beta's page is a missing one");
    assert.equal(onAlpha.status, 404);

    ok(await t.beta.on('DELETE', `/api/admin/app-plugins/apps/${APP}`, { token: t.beta.token }), 'beta removes its app');
    assert.equal((await t.beta.on('GET', `/api/admin/app-plugins/apps/${APP}`, { token: t.beta.token })).status, 404);
    const gone = ok(await t.beta.on('GET', `/api/public/s/${page.token}`), "beta's page without its app");
    assert.deepEqual([gone.state, gone.reason], ['revoked', 'app_unavailable']);
    assert.deepEqual(await holds('alpha'), { settings: { who: 'alpha' }, kv: 'alpha value' }, "alpha's app, settings and storage stay");
  });

  test("a wake-up runs in its app's tenant: beta's scheduled job finds beta's file by its path, as beta's op", async () => {
    const pkg = await buildAppPackage({ key, manifest: TICKER, code: TICKER_CODE, languages: { en: { 'a.mark': 'Mark', 'a.remind': 'Remind' } } });
    const r = await s.api('POST', '/t/beta/api/admin/app-plugins/apps', {
      token: t.beta.token,
      raw: new Uint8Array(pkg),
      headers: { 'content-type': 'application/zip' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const path = '/Docs/contract.txt';
    const mark = ok(await t.beta.on('POST', '/api/files/plugins/actions/ticker/mark/run', { token: t.beta.token, body: { paths: [path] } }), 'beta marks');
    for (let i = 0; ; i++) {
      const o = ok(await t.beta.on('GET', `/api/files/ops/${mark.op}`, { token: t.beta.token }), 'the mark op');
      if (o.status === 'ok') break;
      assert.ok(i < 600 && o.status !== 'failed', JSON.stringify(o));
      await new Promise((res) => setTimeout(res, 50));
    }
    ok(await t.beta.on('PATCH', '/api/admin/app-plugins/apps/ticker', { token: t.beta.token, body: { settings: { path } } }), 'the due item');
    // Rounds run on their own (every 1.5 s here): the item is queued once, in beta, as a system job bound to beta.
    let opId = '';
    for (let i = 0; !opId; i++) {
      assert.ok(i < 1200, 'the scheduled item was queued');
      const [row] = await s.server.db.async.sql<{ op_id: string | null }>(
        "SELECT op_id FROM app_plugin_schedule_runs WHERE tenant_id = ? AND plugin = 'ticker' AND key = 'k'",
        [t.beta.id],
      );
      opId = row?.op_id ?? '';
      if (!opId) await new Promise((res) => setTimeout(res, 50));
    }
    for (let i = 0; ; i++) {
      const o = ok(await t.beta.on('GET', `/api/files/ops/${opId}`, { token: t.beta.token }), "beta's admin sees the scheduled op");
      if (o.status === 'ok') break;
      assert.ok(i < 600 && o.status !== 'failed', JSON.stringify(o));
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal((await t.alpha.on('GET', `/api/files/ops/${opId}`, { token: t.alpha.token })).status, 404, "not alpha's op");
    assert.equal((await t.beta.on('GET', `/api/files/raw?path=${encodeURIComponent(path)}`, { token: t.beta.token })).body, 'reminded');
    assert.equal((await t.alpha.on('GET', `/api/files/raw?path=${encodeURIComponent(path)}`, { token: t.alpha.token })).body, 'alpha contract');
  });

  test('the trust lists and the app store are the operator’s: a tenant admin reads the lists and changes nothing', async () => {
    const refused = async (method: string, path: string, body?: unknown) => {
      const r = await t.alpha.on(method, path, { token: t.alpha.token, body });
      assert.deepEqual([r.status, r.body?.error], [403, 'supertenant_only'], `${method} ${path}`);
    };
    await refused('POST', '/api/admin/app-plugins/keys', { publisher: 'other', public_key_pem: key.trusted.public_key_pem });
    await refused('POST', '/api/admin/app-plugins/license-revocations', { license_id: 'L1' });
    await refused('GET', '/api/admin/app-store/stores');
    await refused('GET', '/api/admin/app-store/catalogue');
    const keys = ok(await t.alpha.on('GET', '/api/admin/app-plugins/keys', { token: t.alpha.token }), 'alpha reads the trusted keys');
    assert.deepEqual(
      (keys.keys as Array<{ publisher: string }>).map((k) => k.publisher),
      ['acme'],
    );
  });
});
