/**
 * The app store end to end (issue 33, first slice; docs/app-store.md): the
 * example store (the two example apps, built and signed by
 * scripts/build-example-store.ts) served from a temp folder by a tiny static
 * HTTP server on loopback with ETags; a real server connects it, browses,
 * installs, upgrades 1.0 → 1.1, asks for a new permission, refuses a
 * downgrade and an incompatible version, uninstalls; then a tampered
 * index.json, a package whose sha differs, a store key that changed, a store
 * that accepts and never answers, an oversized index, the switch and API keys.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditRows, startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { closeAll, listenLoopback, serveStoreFolder } from '../helpers/static-store';
import { buildExampleStore, EXAMPLE_PUBLISHER, exampleRelease } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore, fingerprint } from '../../server/store';

// The store's request bound. The streamed oversized index must reach the size cap (~24 MiB through fetch's
// web stream) inside it: 2 s was too short at load ~10 (answered `timeout` instead of `too_large`).
const TIMEOUT_S = 5;

describe('app store', () => {
  let s: TestServer;
  let admin: string;
  let site: string;
  let storeUrl: string;
  let storeId: number;
  const cleanups: Array<() => void> = [];
  const servers: Server[] = [];
  const publisher = generateKeyPairSync('ed25519').privateKey;
  let storeKey: KeyObject = generateKeyPairSync('ed25519').privateKey;
  /** Requests the static store saw: path and status. */
  const seen: Array<{ path: string; status: number }> = [];

  const listen = (handler: (req: IncomingMessage, res: ServerResponse) => void) => listenLoopback(servers, handler);
  const serveFolder = (dir: string) => serveStoreFolder(servers, dir, seen);
  const api = (method: string, path: string, body?: unknown, token = admin) => s.api(method, `/api/admin/app-store${path}`, { token, body });
  const refusal = (r: { status: number; body: any }) => [r.status, r.body.error, r.body.details?.kind, r.body.details?.reason];
  const publish = async (patch: Record<string, unknown>) => {
    const { file, bytes } = await exampleRelease('images-to-pdf', publisher, patch);
    writeFileSync(join(site, file), bytes);
    await buildStore(site, storeKey, { name: 'Filedock example store' });
  };
  const installedVersion = async (id: string) => {
    const r = await s.api('GET', `/api/admin/app-plugins/apps/${id}`, { token: admin });
    return r.status === 200 ? r.body.version : null;
  };

  before(async () => {
    const t = tempDir('filedock-store-');
    cleanups.push(t.cleanup);
    site = t.dir;
    await buildExampleStore(site, publisher, storeKey);
    storeUrl = await serveFolder(site);
    s = await startTestServer({ SERVICE_APP_STORE_TIMEOUT: `${TIMEOUT_S}s` });
    admin = await s.login();
    const k = await s.api('POST', '/api/admin/app-plugins/keys', {
      token: admin,
      body: { publisher: EXAMPLE_PUBLISHER, public_key_pem: publicPem(publisher) },
    });
    assert.equal(k.status, 201, JSON.stringify(k.body));
  });
  after(async () => {
    await s?.close();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('connect: the key is checked against the index before the store is saved; the answer carries its fingerprint', async () => {
    const other = publicPem(generateKeyPairSync('ed25519').privateKey);
    let r = await api('POST', '/stores', { url: storeUrl, public_key_pem: other });
    assert.deepEqual(refusal(r), [502, 'store_signature', 'app', 'key_changed']);
    assert.deepEqual((await api('GET', '/stores')).body.stores, []);
    r = await api('POST', '/stores', { url: storeUrl, public_key_pem: 'not a key' });
    assert.deepEqual([r.status, r.body.details?.field], [400, 'public_key_pem']);
    r = await api('POST', '/stores', { url: `${storeUrl}index.json`, public_key_pem: publicPem(storeKey) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.url, storeUrl);
    assert.equal(r.body.fingerprint, fingerprint(publicPem(storeKey)));
    assert.equal(r.body.name, 'Filedock example store');
    storeId = r.body.id;
    r = await api('POST', '/stores', { url: storeUrl, public_key_pem: publicPem(storeKey) });
    assert.deepEqual([r.status, r.body.error], [409, 'conflict']);
    const audit = await auditRows(s, admin, 'app_store.connect', 1);
    assert.equal(audit[0].meta.fingerprint, fingerprint(publicPem(storeKey)));
  });

  test('browse, refresh by conditional GET, install; installing again is refused', async () => {
    let r = await api('GET', '/catalogue');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const byId = Object.fromEntries(r.body.entries.map((e: any) => [e.id, e]));
    assert.deepEqual(
      Object.keys(byId).sort(),
      ['de', 'fill-and-sign', 'http-index', 'images-to-pdf'],
      'the apps, the German pack (test/http/language-packs.test.ts) and the example driver (test/http/store-drivers.test.ts)',
    );
    assert.deepEqual(
      [byId['images-to-pdf'].latest.version, byId['images-to-pdf'].installed_version, byId['images-to-pdf'].update_available],
      ['1.0.0', null, false],
    );
    assert.deepEqual(byId['images-to-pdf'].latest.permissions, ['files.read', 'files.write', 'ops']);

    seen.length = 0;
    r = await api('POST', `/stores/${storeId}/refresh`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(seen, [{ path: 'index.json', status: 304 }], 'an unchanged index is not sent again');

    r = await api('POST', '/apps/images-to-pdf/install', { store: storeId });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(await installedVersion('images-to-pdf'), '1.0.0');
    r = await api('POST', '/apps/images-to-pdf/install', { store: storeId });
    assert.deepEqual(refusal(r), [409, 'intent_installed', 'app', 'already_installed']);
    assert.equal((await auditRows(s, admin, 'app_store.install', 1))[0].meta.version, '1.0.0');
    r = await api('GET', '/catalogue');
    assert.equal(r.body.entries.find((e: any) => e.id === 'images-to-pdf').installed_version, '1.0.0');
  });

  test('upgrade 1.0 → 1.1 once the store publishes it; a new permission asks; a downgrade and an incompatible version are refused', async () => {
    await publish({ version: '1.1.0' });
    let r = await api('POST', `/stores/${storeId}/refresh`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const entry = (await api('GET', '/catalogue')).body.entries.find((e: any) => e.id === 'images-to-pdf');
    assert.deepEqual([entry.installed_version, entry.latest.version, entry.update_available], ['1.0.0', '1.1.0', true]);
    const updates = (await api('GET', '/catalogue?updates=true')).body;
    assert.deepEqual([updates.total, updates.entries.map((e: any) => e.id)], [1, ['images-to-pdf']]);
    const found = (await api('GET', '/catalogue?q=SIGN&limit=1')).body;
    assert.deepEqual([found.total, found.entries.map((e: any) => e.id)], [1, ['fill-and-sign']], 'search in names and descriptions');
    assert.deepEqual(
      (await api('GET', '/catalogue?limit=1&offset=3')).body.entries.map((e: any) => e.id),
      ['images-to-pdf'],
    );
    assert.deepEqual(
      (await api('GET', '/catalogue?kind=storage')).body.entries.map((e: any) => e.id),
      ['http-index'],
    );
    r = await api('POST', '/apps/images-to-pdf/upgrade', { store: storeId });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await installedVersion('images-to-pdf'), '1.1.0');

    await publish({ version: '1.2.0', permissions: ['files.read', 'files.write', 'ops', 'state'] });
    await api('POST', `/stores/${storeId}/refresh`);
    r = await api('POST', '/apps/images-to-pdf/upgrade', { store: storeId });
    assert.deepEqual(refusal(r), [409, 'intent_permission', 'app', 'permission_not_approved']);
    assert.deepEqual(r.body.details.permissions, ['state']);
    assert.equal(await installedVersion('images-to-pdf'), '1.1.0');
    r = await api('POST', '/apps/images-to-pdf/upgrade', { store: storeId, approve_permissions: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.permissions.includes('state'));

    r = await api('POST', '/apps/images-to-pdf/upgrade', { store: storeId, version: '1.0.0' });
    assert.deepEqual(refusal(r), [409, 'intent_newer_installed', 'app', 'newer_installed']);
    r = await api('POST', '/apps/images-to-pdf/upgrade', { store: storeId });
    assert.deepEqual(refusal(r), [409, 'intent_installed', 'app', 'already_installed']);

    await publish({ version: '1.3.0', filex_range: '^9.0.0' });
    await api('POST', `/stores/${storeId}/refresh`);
    r = await api('POST', '/apps/images-to-pdf/upgrade', { store: storeId, version: '1.3.0' });
    assert.deepEqual(refusal(r), [409, 'intent_incompatible', 'app', 'incompatible_version']);
    const e2 = (await api('GET', '/catalogue')).body.entries.find((e: any) => e.id === 'images-to-pdf');
    assert.deepEqual([e2.latest.version, e2.update_available], ['1.2.0', false], 'the newest version that runs here');
  });

  test('uninstall', async () => {
    const r = await api('DELETE', '/apps/images-to-pdf');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await installedVersion('images-to-pdf'), null);
    assert.equal((await api('GET', '/catalogue')).body.entries.find((e: any) => e.id === 'images-to-pdf').installed_version, null);
  });

  test('a package whose sha differs from the index is refused and nothing is installed', async () => {
    const file = join(site, 'fill-and-sign-1.0.0.zip');
    const good = readFileSync(file);
    const bad = Buffer.from(good);
    bad[100] ^= 0xff;
    writeFileSync(file, bad);
    try {
      const r = await api('POST', '/apps/fill-and-sign/install', { store: storeId });
      assert.deepEqual(refusal(r), [502, 'store_sha_mismatch', 'app', 'sha_mismatch']);
      writeFileSync(file, Buffer.concat([good, Buffer.from('more')]));
      const longer = await api('POST', '/apps/fill-and-sign/install', { store: storeId });
      assert.deepEqual(refusal(longer), [502, 'store_sha_mismatch', 'app', 'size_mismatch']);
      assert.equal(await installedVersion('fill-and-sign'), null);
    } finally {
      writeFileSync(file, good);
    }
  });

  test('a tampered index.json and a changed store key are refused; nothing installs from the store until it verifies again', async () => {
    const index = join(site, 'index.json');
    const good = readFileSync(index);
    writeFileSync(index, good.toString('utf8').replace('"Fill and sign"', '"Fill and sign!"'));
    let r = await api('POST', `/stores/${storeId}/refresh`);
    assert.deepEqual(refusal(r), [502, 'store_signature', 'app', 'signature_bad']);
    r = await api('POST', '/apps/fill-and-sign/install', { store: storeId });
    assert.deepEqual(refusal(r), [502, 'store_signature', 'app', 'signature_bad']);
    const cat = (await api('GET', '/catalogue')).body;
    assert.equal(cat.entries.length, 0);
    assert.equal(cat.stores[0].error.error, 'store_signature');
    assert.match((await api('GET', '/stores')).body.stores[0].last_error, /store_signature/);

    const trusted = storeKey;
    storeKey = generateKeyPairSync('ed25519').privateKey;
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    r = await api('POST', `/stores/${storeId}/refresh`);
    assert.deepEqual(refusal(r), [502, 'store_signature', 'app', 'key_changed']);
    assert.equal(r.body.details.trusted, fingerprint(publicPem(trusted)));

    storeKey = trusted;
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    r = await api('POST', `/stores/${storeId}/refresh`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.last_error, null);
  });

  test('a store that accepts and never answers is bounded by the timeout; a closed port is unreachable', async () => {
    const held: ServerResponse[] = [];
    const url = await listen((_req, res) => void held.push(res));
    const t0 = Date.now();
    const r = await api('POST', '/stores', { url, public_key_pem: publicPem(storeKey) });
    const took = Date.now() - t0;
    assert.deepEqual(refusal(r), [502, 'store_unreachable', 'app', 'timeout']);
    assert.ok(took >= TIMEOUT_S * 1000 - 100 && took < TIMEOUT_S * 1000 + 3000, `answered after ${took} ms`);
    assert.equal(held.length, 1, 'the store was reached');
    const closed = await api('POST', '/stores', { url: 'http://127.0.0.1:1/', public_key_pem: publicPem(storeKey) });
    assert.deepEqual(refusal(closed), [502, 'store_unreachable', 'app', 'unreachable']);
  });

  test('an oversized index is refused without reading it all (declared and streamed)', async () => {
    const big = 50 * 1024 * 1024;
    let sent = 0;
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const url = await listen((req, res) => {
      if (req.url!.includes('declared')) res.setHeader('content-length', String(big));
      // Writes as the reader takes it: stops when the connection goes.
      const more = () => {
        while (sent < big && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        if (!res.destroyed) res.end();
      };
      res.on('close', () => res.destroy());
      more();
    });
    let r = await api('POST', '/stores', { url: `${url}declared/`, public_key_pem: publicPem(storeKey) });
    assert.deepEqual(refusal(r), [502, 'store_invalid', 'app', 'too_large']);
    sent = 0;
    r = await api('POST', '/stores', { url: `${url}streamed/`, public_key_pem: publicPem(storeKey) });
    assert.deepEqual(refusal(r), [502, 'store_invalid', 'app', 'too_large']);
    await new Promise((res) => setTimeout(res, 50));
    assert.ok(sent < 24 * 1024 * 1024, `the server wrote ${sent} bytes of the 50 MiB index`);
  });

  test('enable/disable, the store switch, API keys, disconnect', async () => {
    let r = await api('PATCH', `/stores/${storeId}`, { enabled: false });
    assert.equal(r.body.enabled, false);
    assert.deepEqual((await api('GET', '/catalogue')).body.entries, []);
    r = await api('POST', '/apps/fill-and-sign/install', { store: storeId });
    assert.deepEqual([r.status, r.body.details?.reason], [409, 'store_disabled']);
    await api('PATCH', `/stores/${storeId}`, { enabled: true });

    r = await api('PATCH', '/config', { enabled: false });
    assert.equal(r.status, 200);
    r = await api('GET', '/catalogue');
    assert.deepEqual([r.status, r.body.error], [503, 'app_store_disabled']);
    await api('PATCH', '/config', { enabled: true });
    assert.equal((await api('GET', '/catalogue')).status, 200);

    const k = await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 'ops', verbs: ['admin', 'files:read'] } });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    for (const [m, p] of [
      ['GET', '/stores'],
      ['GET', '/catalogue'],
      ['POST', '/apps/fill-and-sign/install'],
    ]) {
      r = await api(m, p, m === 'POST' ? { store: storeId } : undefined, k.body.token);
      assert.deepEqual([r.status, r.body.error], [403, 'session_required'], `${m} ${p}`);
    }

    r = await api('DELETE', `/stores/${storeId}`);
    assert.equal(r.status, 200);
    assert.deepEqual((await api('GET', '/stores')).body.stores, []);
    assert.equal((await auditRows(s, admin, 'app_store.disconnect', 1)).length, 1);
  });
});
