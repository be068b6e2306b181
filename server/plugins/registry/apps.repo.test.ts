import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
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

const pkg = (id: string, version = '1.0.0', code = 'export {}'): AppPackage => ({
  manifest: { id, version, publisher: 'acme', name: id, permissions: ['storage'], http_hosts: [], actions: [], views: [] } as unknown as Manifest,
  code,
  languages: { en: { hello: 'Hello' } },
  icons: { 'icons/a.png': Buffer.from('png') },
  digest: `digest-${id}-${version}`,
});

test('an app installs once (racing installs: exactly one wins), reads back parsed and is listed, changed and removed', async () => {
  const got = await Promise.all(Array.from({ length: 4 }, () => repo.install(pkg('notes'), null, ['api.example'])));
  assert.equal(got.filter(Boolean).length, 1, 'one install wins; the others find it there');
  const app = (await repo.get('notes'))!;
  assert.equal(app.version, '1.0.0');
  assert.equal(app.enabled, true);
  assert.deepEqual(app.approved_hosts, ['api.example']);
  assert.deepEqual(app.manifest.open, [], 'a manifest without open reads as having none');
  assert.equal(app.icons['icons/a.png'], Buffer.from('png').toString('base64'));
  assert.equal(repo.known('notes'), app, 'the synchronous presenters see the app read');
  assert.equal(await repo.get('nothing'), null);
  await repo.install(pkg('atlas'), null, []);
  assert.deepEqual(
    (await repo.list()).map((a) => a.id),
    ['atlas', 'notes'],
  );
  assert.equal(await repo.update('notes', '1.0.0', { enabled: false, settings: { a: 1 } }), true);
  assert.equal(await repo.update('notes', '0.9.0', { enabled: true }), false, 'checked against another version: refused');
  const off = (await repo.get('notes'))!;
  assert.equal(off.enabled, false);
  assert.deepEqual(off.settings, { a: 1 });
  assert.equal(await repo.remove('atlas'), true);
  assert.equal(await repo.remove('atlas'), false);
  assert.deepEqual(
    (await repo.list()).map((a) => a.id),
    ['notes'],
  );
});

test('racing upgrades from one version: exactly one replaces the package; settings and the enabled state stay', async () => {
  await repo.install(pkg('up'), null, []);
  await repo.update('up', '1.0.0', { enabled: false, settings: { keep: true } });
  const got = await Promise.all(['1.1.0', '1.2.0', '2.0.0'].map((v) => repo.upgrade(pkg('up', v, `v${v}`), '1.0.0', [])));
  const won = got.filter(Boolean);
  assert.equal(won.length, 1, JSON.stringify(got.map((a) => a?.version ?? null)));
  const now = (await repo.get('up'))!;
  assert.equal(now.version, won[0]!.version);
  assert.equal(now.code, `v${now.version}`);
  assert.equal(now.enabled, false);
  assert.deepEqual(now.settings, { keep: true });
  assert.equal(await repo.upgrade(pkg('gone', '2.0.0'), '1.0.0', []), null, 'no app to upgrade');
});

test('a read racing a write does not leave the old app in the cache', async () => {
  await repo.install(pkg('fresh'), null, []);
  const fresh = new AppsRepo(t.db);
  await Promise.all([fresh.get('fresh'), fresh.update('fresh', '1.0.0', { settings: { n: 2 } })]);
  assert.deepEqual((await fresh.get('fresh'))!.settings, { n: 2 });
});

test('kv: set, get, list by prefix, delete; removed with its app', async () => {
  await repo.install(pkg('kv'), null, []);
  const caps = { keys: 100, bytes: 100_000 };
  assert.equal(await repo.kvSet('kv', 'a/1', '"x"', caps), true);
  assert.equal(await repo.kvSet('kv', 'a/2', '"y"', caps), true);
  assert.equal(await repo.kvSet('kv', 'b/1', '"z"', caps), true);
  assert.equal(await repo.kvSet('kv', 'a/1', '"x2"', caps), true);
  assert.equal(await repo.kvGet('kv', 'a/1'), '"x2"');
  assert.equal(await repo.kvGet('kv', 'none'), null);
  assert.deepEqual(await repo.kvKeys('kv', 'a/', 10), ['a/1', 'a/2']);
  assert.deepEqual(await repo.kvKeys('kv', '', 2), ['a/1', 'a/2']);
  assert.equal(await repo.kvDelete('kv', 'a/2'), true);
  assert.equal(await repo.kvDelete('kv', 'a/2'), false);
  await repo.remove('kv');
  assert.deepEqual(await repo.kvKeys('kv', '', 10), [], 'gone by cascade');
});

test('kv caps hold under racing writers: of new keys past the key cap exactly one fits; bytes likewise', async () => {
  await repo.install(pkg('capped'), null, []);
  const caps = { keys: 3, bytes: 1_000_000 };
  await repo.kvSet('capped', 'k1', '1', caps);
  await repo.kvSet('capped', 'k2', '2', caps);
  const got = await Promise.all(['n1', 'n2', 'n3', 'n4'].map((k) => repo.kvSet('capped', k, '3', caps)));
  assert.equal(got.filter(Boolean).length, 1, JSON.stringify(got));
  assert.equal((await repo.kvKeys('capped', '', 100)).length, 3);
  assert.equal(await repo.kvSet('capped', 'k1', '11', caps), true, 'an existing key may still change');
  // Bytes: a row counts its key and value (2 + 10); a write fits while the stored bytes plus its value stay within 40.
  await repo.install(pkg('bytes'), null, []);
  const bcaps = { keys: 100, bytes: 40 };
  await repo.kvSet('bytes', 'b1', 'x'.repeat(10), bcaps);
  await repo.kvSet('bytes', 'b2', 'x'.repeat(10), bcaps);
  const byBytes = await Promise.all(['c1', 'c2', 'c3'].map((k) => repo.kvSet('bytes', k, 'x'.repeat(10), bcaps)));
  assert.equal(byBytes.filter(Boolean).length, 1, JSON.stringify(byBytes));
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
