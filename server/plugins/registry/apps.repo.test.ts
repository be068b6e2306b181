import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT } from '../../db';
import { AppsRepo } from './apps.repo';
import type { Manifest } from '../package/manifest';
import type { AppPackage } from '../package/package';
import { openTestDb, type TestDb } from '../../../test/helpers/test-database';

let t: TestDb;
let repo: AppsRepo;
before(async () => {
  t = await openTestDb();
  repo = new AppsRepo(t.db);
});
after(() => t?.close());

const T1 = DEFAULT_TENANT;
const T2 = { tenant_id: 2 };
/** Tenant 1's app `id` (single-tenant mode's every app). */
const ref = (id: string, s = T1) => ({ tenant_id: s.tenant_id, id });

const pkg = (id: string, version = '1.0.0', code = 'export {}'): AppPackage => ({
  manifest: { id, version, publisher: 'acme', name: id, permissions: ['storage'], http_hosts: [], actions: [], views: [] } as unknown as Manifest,
  code,
  languages: { en: { hello: 'Hello' } },
  icons: { 'icons/a.png': Buffer.from('png') },
  digest: `digest-${id}-${version}`,
});

test('an app installs once (racing installs: exactly one wins), reads back parsed and is listed, changed and removed', async () => {
  const got = await Promise.all(Array.from({ length: 4 }, () => repo.install(T1, pkg('notes'), null, ['api.example'])));
  assert.equal(got.filter(Boolean).length, 1, 'one install wins; the others find it there');
  const app = (await repo.get(T1, 'notes'))!;
  assert.equal(app.version, '1.0.0');
  assert.equal(app.enabled, true);
  assert.deepEqual(app.approved_hosts, ['api.example']);
  assert.deepEqual(app.manifest.open, [], 'a manifest without open reads as having none');
  assert.equal(app.icons['icons/a.png'], Buffer.from('png').toString('base64'));
  assert.equal(repo.known(T1, 'notes'), app, 'the synchronous presenters see the app read');
  assert.equal(await repo.get(T1, 'nothing'), null);
  await repo.install(T1, pkg('atlas'), null, []);
  assert.deepEqual(
    (await repo.list(T1)).map((a) => a.id),
    ['atlas', 'notes'],
  );
  assert.equal(await repo.update(ref('notes'), '1.0.0', { enabled: false, settings: { a: 1 } }), true);
  assert.equal(await repo.update(ref('notes'), '0.9.0', { enabled: true }), false, 'checked against another version: refused');
  const off = (await repo.get(T1, 'notes'))!;
  assert.equal(off.enabled, false);
  assert.deepEqual(off.settings, { a: 1 });
  assert.equal(await repo.remove(ref('atlas')), true);
  assert.equal(await repo.remove(ref('atlas')), false);
  assert.deepEqual(
    (await repo.list(T1)).map((a) => a.id),
    ['notes'],
  );
});

test('racing upgrades from one version: exactly one replaces the package; settings and the enabled state stay', async () => {
  await repo.install(T1, pkg('up'), null, []);
  await repo.update(ref('up'), '1.0.0', { enabled: false, settings: { keep: true } });
  const got = await Promise.all(['1.1.0', '1.2.0', '2.0.0'].map((v) => repo.upgrade(T1, pkg('up', v, `v${v}`), '1.0.0', [])));
  const won = got.filter(Boolean);
  assert.equal(won.length, 1, JSON.stringify(got.map((a) => a?.version ?? null)));
  const now = (await repo.get(T1, 'up'))!;
  assert.equal(now.version, won[0]!.version);
  assert.equal(now.code, `v${now.version}`);
  assert.equal(now.enabled, false);
  assert.deepEqual(now.settings, { keep: true });
  assert.equal(await repo.upgrade(T1, pkg('gone', '2.0.0'), '1.0.0', []), null, 'no app to upgrade');
});

test('a read racing a write does not leave the old app in the cache', async () => {
  await repo.install(T1, pkg('fresh'), null, []);
  const fresh = new AppsRepo(t.db);
  await Promise.all([fresh.get(T1, 'fresh'), fresh.update(ref('fresh'), '1.0.0', { settings: { n: 2 } })]);
  assert.deepEqual((await fresh.get(T1, 'fresh'))!.settings, { n: 2 });
});

test('kv: set, get, list by prefix, delete; removed with its app', async () => {
  await repo.install(T1, pkg('kv'), null, []);
  const caps = { keys: 100, bytes: 100_000 };
  assert.equal(await repo.kvSet(ref('kv'), 'a/1', '"x"', caps), true);
  assert.equal(await repo.kvSet(ref('kv'), 'a/2', '"y"', caps), true);
  assert.equal(await repo.kvSet(ref('kv'), 'b/1', '"z"', caps), true);
  assert.equal(await repo.kvSet(ref('kv'), 'a/1', '"x2"', caps), true);
  assert.equal(await repo.kvGet(ref('kv'), 'a/1'), '"x2"');
  assert.equal(await repo.kvGet(ref('kv'), 'none'), null);
  assert.deepEqual(await repo.kvKeys(ref('kv'), 'a/', 10), ['a/1', 'a/2']);
  assert.deepEqual(await repo.kvKeys(ref('kv'), '', 2), ['a/1', 'a/2']);
  assert.equal(await repo.kvDelete(ref('kv'), 'a/2'), true);
  assert.equal(await repo.kvDelete(ref('kv'), 'a/2'), false);
  await repo.remove(ref('kv'));
  assert.deepEqual(await repo.kvKeys(ref('kv'), '', 10), [], 'gone by cascade');
});

test('kv caps hold under racing writers: of new keys past the key cap exactly one fits; bytes likewise', async () => {
  await repo.install(T1, pkg('capped'), null, []);
  const caps = { keys: 3, bytes: 1_000_000 };
  await repo.kvSet(ref('capped'), 'k1', '1', caps);
  await repo.kvSet(ref('capped'), 'k2', '2', caps);
  const got = await Promise.all(['n1', 'n2', 'n3', 'n4'].map((k) => repo.kvSet(ref('capped'), k, '3', caps)));
  assert.equal(got.filter(Boolean).length, 1, JSON.stringify(got));
  assert.equal((await repo.kvKeys(ref('capped'), '', 100)).length, 3);
  assert.equal(await repo.kvSet(ref('capped'), 'k1', '11', caps), true, 'an existing key may still change');
  // Bytes: a row counts its key and value (2 + 10); a write fits while the stored bytes plus its value stay within 40.
  await repo.install(T1, pkg('bytes'), null, []);
  const bcaps = { keys: 100, bytes: 40 };
  await repo.kvSet(ref('bytes'), 'b1', 'x'.repeat(10), bcaps);
  await repo.kvSet(ref('bytes'), 'b2', 'x'.repeat(10), bcaps);
  const byBytes = await Promise.all(['c1', 'c2', 'c3'].map((k) => repo.kvSet(ref('bytes'), k, 'x'.repeat(10), bcaps)));
  assert.equal(byBytes.filter(Boolean).length, 1, JSON.stringify(byBytes));
});

test('tenants: the same app id installs in two tenants, each with its own settings and kv; neither finds, changes nor removes the other', async () => {
  const one = (await repo.install(T1, pkg('twin'), null, []))!;
  const two = (await repo.install(T2, pkg('twin', '2.0.0'), null, []))!;
  assert.ok(one && two, 'the same id installs in both tenants');
  assert.equal(two.tenant_id, 2);
  assert.equal(await repo.install(T2, pkg('twin'), null, []), null, 'but once per tenant');
  assert.equal((await repo.get(T1, 'twin'))!.version, '1.0.0');
  assert.equal((await repo.get(T2, 'twin'))!.version, '2.0.0');
  assert.equal(await repo.get(T2, 'notes'), null, "tenant 1's app is not tenant 2's");
  assert.ok(!(await repo.list(T2)).some((a) => a.id === 'notes'));
  assert.deepEqual(
    (await repo.list(T2)).map((a) => a.id),
    ['twin'],
  );
  assert.equal(await repo.update(ref('twin', T2), '1.0.0', { settings: { x: 1 } }), false, "tenant 1's version does not change tenant 2's app");
  assert.equal(await repo.update(ref('twin', T2), '2.0.0', { settings: { mine: 2 } }), true);
  assert.deepEqual((await repo.get(T1, 'twin'))!.settings, {}, "tenant 1's settings stay");
  assert.equal(await repo.upgrade(T2, pkg('notes', '9.0.0'), '1.0.0', []), null, "tenant 2 cannot upgrade tenant 1's app");
  const caps = { keys: 100, bytes: 100_000 };
  await repo.kvSet(ref('twin'), 'k', '"one"', caps);
  await repo.kvSet(ref('twin', T2), 'k', '"two"', caps);
  assert.equal(await repo.kvGet(ref('twin'), 'k'), '"one"');
  assert.equal(await repo.kvGet(ref('twin', T2), 'k'), '"two"');
  assert.equal(await repo.kvGet(ref('notes', T2), 'k'), null);
  assert.equal(await repo.kvDelete(ref('twin', T2), 'k'), true);
  assert.equal(await repo.kvGet(ref('twin'), 'k'), '"one"', "tenant 2's delete left tenant 1's key");
  assert.equal(await repo.remove(ref('notes', T2)), false, "tenant 1's app is not removed from tenant 2");
  assert.equal(await repo.remove(ref('twin', T2)), true);
  assert.equal(await repo.get(T2, 'twin'), null);
  assert.equal((await repo.get(T1, 'twin'))?.version, '1.0.0', "tenant 1's app and kv stay");
  assert.deepEqual(await repo.kvKeys(ref('twin'), '', 10), ['k']);
});

test('trusted publisher keys are added (their id back), listed and removed', async () => {
  const id = await repo.addKey({ publisher: 'acme', public_key_pem: 'PEM' }, null);
  assert.ok(Number.isInteger(id) && id > 0);
  assert.deepEqual(
    (await repo.trustedKeys()).map((k) => [k.id, k.publisher]),
    [[id, 'acme']],
  );
  assert.equal(await repo.removeKey(id), true);
  assert.equal(await repo.removeKey(id), false);
});
