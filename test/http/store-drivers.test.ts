/**
 * Storage drivers from the app store (issue 33; docs/app-store.md, "Storage
 * drivers"): the example store (scripts/build-example-store.ts) served on
 * loopback, a real server installs its example driver (`http-index`), which is
 * verified, unpacked into the data dir's plugin folder, probed and offered
 * without a restart; a storage on it lists and downloads files a second
 * loopback web server lists (nginx's JSON autoindex, and an HTML index page).
 * Then an upgrade, a restart (the driver found again by discovery), an uninstall refused while a storage uses the driver, and
 * refusals that leave nothing behind: an untrusted signature, a package whose
 * sha differs from the index, a driver that does not speak the protocol.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { closeAll, listenLoopback, serveStoreFolder, webFolder } from '../helpers/static-store';
import { buildExampleStore, EXAMPLE_PUBLISHER, exampleDriver } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore } from '../../server/store';

describe('storage drivers from the app store', () => {
  let s: TestServer;
  let admin: string;
  let site: string;
  let web: string;
  let storeId: number;
  let storageId: number;
  const cleanups: Array<() => void> = [];
  const servers: Server[] = [];
  const publisher = generateKeyPairSync('ed25519').privateKey;
  const storeKey = generateKeyPairSync('ed25519').privateKey;
  const big = randomBytes(700 * 1024);

  const api = (method: string, path: string, body?: unknown) => s.api(method, `/api/admin/app-store${path}`, { token: admin, body });
  /** Requests the static store saw. */
  const seen: Array<{ path: string; status: number }> = [];
  const refusal = (r: { status: number; body: any }) => [r.status, r.body.error, r.body.details?.kind, r.body.details?.reason];
  const drivers = async () => (await s.api('GET', '/api/admin/storage-drivers', { token: admin })).body.map((d: any) => d.driver);
  /** The data dir the server runs on (kept across the restart). */
  let dataDir: string;
  const pluginDir = () => join(dataDir, 'plugins');
  /** Publishes a driver package into the served store and re-signs its index. */
  const publish = async (pkg: { file: string; bytes: Buffer }) => {
    writeFileSync(join(site, pkg.file), pkg.bytes);
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    assert.equal((await api('POST', `/stores/${storeId}/refresh`)).status, 200);
  };
  const list = async (path: string) => {
    const until = Date.now() + 15_000;
    for (;;) {
      const r = await s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}`, { token: admin });
      if ((r.status === 200 && r.body.entries.length) || Date.now() > until) return r;
      await new Promise((ok) => setTimeout(ok, 100));
    }
  };

  before(async () => {
    const t = tempDir('filedock-store-drivers-');
    cleanups.push(t.cleanup);
    site = join(t.dir, 'site');
    const files = join(t.dir, 'files');
    mkdirSync(join(files, 'sub dir'), { recursive: true });
    writeFileSync(join(files, 'readme.txt'), 'hello from the web\n');
    writeFileSync(join(files, 'big.bin'), big);
    writeFileSync(join(files, 'sub dir', 'ä b.txt'), 'umlaut');
    await buildExampleStore(site, publisher, storeKey);
    const storeUrl = await serveStoreFolder(servers, site, seen);
    web = await listenLoopback(servers, webFolder(files));
    s = await startTestServer();
    dataDir = s.dataDir;
    admin = await s.login();
    const k = await s.api('POST', '/api/admin/app-plugins/keys', {
      token: admin,
      body: { publisher: EXAMPLE_PUBLISHER, public_key_pem: publicPem(publisher) },
    });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    const c = await api('POST', '/stores', { url: storeUrl, public_key_pem: publicPem(storeKey) });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    storeId = c.body.id;
    assert.equal((await s.api('PATCH', '/api/admin/homes', { token: admin, body: { enabled: false } })).status, 200);
  });
  after(async () => {
    await s?.close();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('a plugin folder without room refuses the install before anything is downloaded (intent_disk_full)', async (t) => {
    if (process.getuid?.() !== 0) {
      if (process.env.CI === 'true' || process.env.CI === '1') throw new Error('[CI] mounting a small tmpfs needs root');
      return t.skip('mounting a small tmpfs over the plugin folder needs root');
    }
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', pluginDir()]);
    try {
      const before = seen.length;
      const r = await api('POST', '/apps/http-index/install', { store: storeId });
      assert.deepEqual(refusal(r), [507, 'intent_disk_full', 'storage', 'disk_full'], JSON.stringify(r.body));
      assert.ok(r.body.details.free < r.body.details.need, JSON.stringify(r.body.details));
      assert.ok(!seen.slice(before).some((x) => x.path.endsWith('.zip')), 'the package was not fetched');
      assert.deepEqual(readdirSync(pluginDir()), []);
    } finally {
      execFileSync('umount', [pluginDir()]);
    }
  });

  test('install: verified, unpacked into the plugin folder, probed and offered under Storages → Add without a restart', async () => {
    const entry = (await api('GET', '/catalogue?kind=storage')).body.entries[0];
    assert.deepEqual([entry.id, entry.kind, entry.latest.version, entry.installed_version], ['http-index', 'storage', '1.0.0', null]);
    assert.ok(!(await drivers()).includes('plugin:http-index'));
    const r = await api('POST', '/apps/http-index/install', { store: storeId });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, { id: 'http-index', kind: 'storage', name: 'Web folder listing', version: '1.0.0', driver: 'plugin:http-index' });
    assert.ok((await drivers()).includes('plugin:http-index'));
    assert.deepEqual(readdirSync(pluginDir()), ['http-index'], 'nothing staged is left beside it');
    assert.deepEqual(readdirSync(join(pluginDir(), 'http-index')).sort(), ['.store.json', 'driver.json', 'index.mjs']);
    assert.equal((await api('GET', '/catalogue?kind=storage')).body.entries[0].installed_version, '1.0.0');
    assert.deepEqual(refusal(await api('POST', '/apps/http-index/install', { store: storeId })), [409, 'intent_installed', 'storage', 'already_installed']);
  });

  test('a storage on it lists and downloads (whole and ranges) through /api/files; writes are refused', async () => {
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { name: 'Web', driver: 'plugin:http-index', rbac_enabled: false, config: { url: `${web}json/` } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    assert.equal(st.body.read_only, true, 'a driver without `write` makes its storage read-only by itself');
    storageId = st.body.id;
    const writable = await s.api('PATCH', `/api/admin/storages/${storageId}`, { token: admin, body: { read_only: false } });
    assert.deepEqual([writable.status, writable.body.error, writable.body.details?.field], [400, 'validation_failed', 'read_only']);
    const r = await list('/Web');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.entries.map((e: any) => [e.name, e.type, e.type === 'file' ? e.size : null]),
      [
        ['sub dir', 'dir', null],
        ['big.bin', 'file', big.length],
        ['readme.txt', 'file', 19],
      ],
    );
    const raw = (p: string, headers: Record<string, string> = {}) =>
      fetch(`${s.url}/api/files/raw?path=${encodeURIComponent(p)}`, { headers: { authorization: `Bearer ${admin}`, ...headers } });
    assert.equal(await (await raw('/Web/readme.txt')).text(), 'hello from the web\n');
    const whole = await raw('/Web/big.bin');
    assert.ok(Buffer.from(await whole.arrayBuffer()).equals(big), 'a body of several chunks under flow control');
    const part = await raw('/Web/big.bin', { range: 'bytes=300000-300009' });
    assert.equal(part.status, 206);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(big.subarray(300000, 300010)));
    const sub = await list('/Web/sub dir');
    assert.deepEqual(
      sub.body.entries.map((e: any) => e.name),
      ['ä b.txt'],
    );
    assert.equal(await (await raw('/Web/sub dir/ä b.txt')).text(), 'umlaut');
    const save = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Web/new.txt', content: 'x' } });
    assert.deepEqual([save.status, save.body.error], [403, 'read_only'], JSON.stringify(save.body));
  });

  test('an HTML index page: the links are the entries, sizes from a HEAD', async () => {
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { name: 'WebHtml', driver: 'plugin:http-index', rbac_enabled: false, config: { url: `${web}html/` } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    const r = await list('/WebHtml');
    assert.deepEqual(r.body.entries.map((e: any) => e.name).sort(), ['big.bin', 'readme.txt', 'sub dir']);
    assert.equal(r.body.entries.find((e: any) => e.name === 'big.bin').size, big.length);
    assert.equal((await s.api('DELETE', `/api/admin/storages/${st.body.id}`, { token: admin })).status, 200);
  });

  test('upgrade to 1.1.0 once the store publishes it; the storage keeps working', async () => {
    await publish(await exampleDriver(publisher, { version: '1.1.0' }));
    const entry = (await api('GET', '/catalogue?kind=storage')).body.entries[0];
    assert.deepEqual([entry.installed_version, entry.latest.version, entry.update_available], ['1.0.0', '1.1.0', true]);
    const r = await api('POST', '/apps/http-index/upgrade', { store: storeId });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.version, '1.1.0');
    assert.equal(JSON.parse(readFileSync(join(pluginDir(), 'http-index', '.store.json'), 'utf8')).version, '1.1.0');
    assert.deepEqual(readdirSync(pluginDir()), ['http-index']);
    assert.ok((await drivers()).includes('plugin:http-index'));
    assert.equal((await list('/Web')).body.entries.length, 3);
  });

  test('a restart finds the installed driver in the plugin folder (discovery); its storage still lists', async () => {
    // Stop without removing the data dir, then start on it again.
    await s.server.close();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    s = await startTestServer({ SERVICE_DATA_DIR: dataDir });
    admin = await s.login();
    assert.ok((await drivers()).includes('plugin:http-index'));
    assert.equal((await api('GET', '/catalogue?kind=storage')).body.entries[0].installed_version, '1.1.0');
    assert.equal((await list('/Web')).body.entries.length, 3);
  });

  test('refused, nothing left behind: a signature the admin does not trust, a sha that differs, a driver that does not answer', async () => {
    const stranger = generateKeyPairSync('ed25519').privateKey;
    await publish(await exampleDriver(stranger, { id: 'untrusted', name: 'Untrusted' }));
    assert.deepEqual(refusal(await api('POST', '/apps/untrusted/install', { store: storeId })), [502, 'store_signature', 'storage', 'package_signature']);

    const swapped = await exampleDriver(publisher, { id: 'swapped', name: 'Swapped' });
    await publish(swapped);
    const changed = Buffer.from(swapped.bytes);
    changed[changed.length - 30] ^= 1;
    writeFileSync(join(site, swapped.file), changed);
    assert.deepEqual(refusal(await api('POST', '/apps/swapped/install', { store: storeId })), [502, 'store_sha_mismatch', 'storage', 'sha_mismatch']);
    writeFileSync(join(site, swapped.file), swapped.bytes);

    const mute = Buffer.from("process.stdout.write('not the protocol\\n');\nsetInterval(() => {}, 1000);\n");
    await publish(await exampleDriver(publisher, { id: 'mute', name: 'Mute' }, mute));
    const r = await api('POST', '/apps/mute/install', { store: storeId });
    assert.deepEqual(refusal(r), [502, 'store_invalid', 'storage', 'driver_refused']);
    assert.match(r.body.details.detail, /storage_unreachable/);

    // The example program under another id answers with its own name: not the entry.
    await publish(await exampleDriver(publisher, { id: 'renamed', name: 'Renamed' }));
    assert.deepEqual(refusal(await api('POST', '/apps/renamed/install', { store: storeId })), [502, 'store_invalid', 'storage', 'index_mismatch']);

    assert.deepEqual(readdirSync(pluginDir()), ['http-index'], 'no folder, staged or not, of a refused driver');
    const offered = await drivers();
    for (const id of ['untrusted', 'swapped', 'mute', 'renamed']) assert.ok(!offered.includes(`plugin:${id}`), id);
  });

  test('uninstall: refused while a storage uses the driver; once it is removed, the driver goes', async () => {
    let r = await api('DELETE', '/apps/http-index');
    assert.deepEqual(refusal(r), [409, 'intent_in_use', 'storage', 'driver_in_use']);
    assert.deepEqual(r.body.details.storages, ['Web']);
    assert.ok((await drivers()).includes('plugin:http-index'));
    assert.equal((await s.api('DELETE', `/api/admin/storages/${storageId}`, { token: admin })).status, 200);
    r = await api('DELETE', '/apps/http-index');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(!(await drivers()).includes('plugin:http-index'));
    assert.deepEqual(readdirSync(pluginDir()), []);
    assert.equal((await api('GET', '/catalogue?kind=storage&q=http-index')).body.entries[0].installed_version, null);
    const audit = (await s.api('GET', '/api/admin/audit?action=app_store.uninstall', { token: admin })).body.events;
    assert.equal(audit[0]?.resource, 'driver:http-index');
  });
});
