/**
 * Licences online (issue 33; docs/app-store.md, "Licences online"): a store
 * served on loopback sells a licence as a file under `licenses/` named by the
 * purchase code's hash; the admin fetches it by code and the paid app runs.
 * The store's signed revocation list, read by the daily refresh, holds the app
 * and lifts it again without touching the admin's own revocations; a tampered
 * list changes nothing; a list unread for 30 days rings the bell once and
 * stops no app.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { closeAll, serveStoreFolder } from '../helpers/static-store';
import { buildAppPackage, publisherKey, sampleManifest } from '../helpers/app-package';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore, issueLicence, revokeLicences } from '../../server/store';
import { signIndex } from '../../server/store/format';

describe('licences online', () => {
  let s: TestServer;
  let admin: string;
  let site: string;
  let storeId: number;
  let licenceId: string;
  let code: string;
  const servers: Server[] = [];
  const cleanups: Array<() => void> = [];
  const publisher = publisherKey('acme');
  const storeKey = generateKeyPairSync('ed25519').privateKey;
  const api = (method: string, path: string, body?: unknown) => s.api(method, `/api/admin/app-store${path}`, { token: admin, body });
  const status = async () => (await s.api('GET', '/api/admin/app-plugins/apps/paid', { token: admin })).body.license?.status;
  const refresh = async () => {
    const r = await api('POST', '/revocations/refresh');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.stores[0];
  };
  const writeList = (ids: string[]) => {
    const bytes = Buffer.from(JSON.stringify({ format: 'filedock-revocations/1', generated_at: new Date().toISOString(), revoked: ids.map((id) => ({ id })) }));
    writeFileSync(join(site, 'revocations.json'), bytes);
    writeFileSync(join(site, 'revocations.json.sig'), signIndex(bytes, storeKey));
  };

  before(async () => {
    const t = tempDir('filedock-licences-');
    cleanups.push(t.cleanup);
    site = t.dir;
    const manifest = sampleManifest({ id: 'paid', name: 'Paid', filex_range: '>=0.1.0', license: { required: true, store: 'shop' } });
    const pkg = await buildAppPackage({ key: publisher, manifest });
    writeFileSync(join(site, 'paid-1.0.0.zip'), pkg);
    await buildStore(site, storeKey, { name: 'Shop' });
    const url = await serveStoreFolder(servers, site);
    s = await startTestServer({ SERVICE_APP_STORE_TIMEOUT: '2s' });
    admin = await s.login();
    for (const [path, body] of [
      ['/api/admin/app-plugins/keys', publisher.trusted],
      ['/api/admin/app-plugins/store-keys', { store: 'shop', public_key_pem: publicPem(storeKey) }],
      ['/api/admin/app-store/stores', { url, public_key_pem: publicPem(storeKey) }],
    ] as const) {
      const r = await s.api('POST', path, { token: admin, body });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      if (path.endsWith('/stores')) storeId = r.body.id;
    }
    const r = await api('POST', '/apps/paid/install', { store: storeId });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const sold = await issueLicence(site, storeKey, { id: 'lic-online-1', store: 'shop', app: 'paid', licensee: 'Acme Ltd' });
    licenceId = 'lic-online-1';
    code = sold.code;
  });
  after(async () => {
    await s?.close();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('a purchase code fetches the licence from the store: the paid app runs; an unknown or malformed code is refused', async () => {
    assert.equal(await status(), 'missing', 'held until a licence is set');
    let r = await api('POST', '/apps/paid/license', { store: storeId, code: 'ABCDE-FGHJK-MNPQR-STVWX' });
    assert.deepEqual([r.status, r.body.error, r.body.details?.kind, r.body.details?.reason], [409, 'intent_license', 'app', 'code_unknown']);
    r = await api('POST', '/apps/paid/license', { store: storeId, code: '../index.json' });
    assert.deepEqual([r.status, r.body.error, r.body.details?.field], [400, 'validation_failed', 'code']);
    r = await api('POST', '/apps/nope/license', { store: storeId, code });
    assert.equal(r.status, 404);
    // Typed as people type it: lower case, spaces for dashes.
    r = await api('POST', '/apps/paid/license', { store: storeId, code: code.toLowerCase().replaceAll('-', ' ') });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'valid');
    assert.equal(await status(), 'valid');
  });

  test("the store's revocation list holds the app and lifts it again; the admin's own revocations stay; a tampered list changes nothing", async () => {
    // No list on the store yet: an empty one.
    assert.deepEqual(await refresh(), { store: storeId, added: 0, lifted: 0, ok: true, stale: false });
    const own = await s.api('POST', '/api/admin/app-plugins/license-revocations', { token: admin, body: { license_id: 'lic-other', note: 'by hand' } });
    assert.equal(own.status, 201);
    await revokeLicences(site, storeKey, [licenceId]);
    assert.deepEqual(await refresh(), { store: storeId, added: 1, lifted: 0, ok: true, stale: false });
    assert.equal(await status(), 'revoked');
    assert.deepEqual(await refresh(), { store: storeId, added: 0, lifted: 0, ok: true, stale: false }, 'unchanged (304)');

    writeFileSync(join(site, 'revocations.json'), '{"format":"filedock-revocations/1","generated_at":"x","revoked":[]}');
    const bad = await refresh();
    assert.deepEqual([bad.ok, bad.error], [false, 'store_signature: signature_bad']);
    assert.equal(await status(), 'revoked', 'what a tampered list says is not taken');

    writeList([]);
    assert.deepEqual(await refresh(), { store: storeId, added: 0, lifted: 1, ok: true, stale: false });
    assert.equal(await status(), 'valid');
    const left = (await s.api('GET', '/api/admin/app-plugins/license-revocations', { token: admin })).body.revocations;
    assert.deepEqual(
      left.map((x: any) => [x.license_id, x.source]),
      [['lic-other', null]],
    );
  });

  test('a list unread for 30 days rings the bell once and stops no app; read again, the warning clears', async () => {
    const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
    await s.server.db.async.sql('UPDATE app_store_connections SET revocations_at = ? WHERE id = ?', [old, storeId]);
    // The store now serves a list nothing can verify (a new list, a signature file that is not one).
    writeList(['lic-new']);
    writeFileSync(join(site, 'revocations.json.sig'), '{}');
    const bell = async () =>
      (await s.api('GET', '/api/notifications?limit=50', { token: admin })).body.notifications.filter((n: any) => n.event === 'app_store.licences_unchecked');
    for (let i = 0; i < 2; i++) {
      const r = await refresh();
      assert.deepEqual([r.ok, r.stale], [false, true]);
    }
    let rung: any[] = [];
    for (let i = 0; i < 100 && rung.length === 0; i++) {
      rung = await bell();
      if (rung.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(rung.length, 1, 'once for the stretch');
    assert.equal(rung[0].severity, 'warning');
    assert.match(rung[0].title, /Shop have not been checked for 30 days/);
    assert.equal(await status(), 'valid', 'the app keeps running');
    const store = (await api('GET', '/stores')).body.stores[0];
    assert.equal(store.licences_unchecked, true);

    writeList([]);
    assert.equal((await refresh()).ok, true);
    const again = (await api('GET', '/stores')).body.stores[0];
    assert.equal(again.licences_unchecked, false);
    assert.ok(Date.parse(again.revocations_at) > Date.now() - 60_000);
  });
});
