/**
 * Updates from the app store without a visit (docs/app-store.md, "Updates"):
 * the example store served from a temp folder on loopback, a real server with
 * images-to-pdf 1.0 installed from it. The store publishes 1.1 and rebuilds its
 * index: the check rings the bell once for admins (not again on the next check)
 * and the updates count is 1. With automatic updates on, the check upgrades the
 * app itself (audited); a version asking for a new permission and a new major
 * version only ring the bell, saying why, and install nothing; an uninstall (either
 * route) forgets the choice. The German language pack follows the same rules
 * (no permissions: only a major version holds it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditRows, startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { closeAll, serveStoreFolder } from '../helpers/static-store';
import { buildExampleStore, EXAMPLE_PUBLISHER, exampleRelease, GERMAN_PACK_DIR, languagePack } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore } from '../../server/store';

const APP = 'images-to-pdf';

describe('app store updates', () => {
  let s: TestServer;
  let admin: string;
  let site: string;
  let storeId: number;
  const servers: Server[] = [];
  const cleanups: Array<() => void> = [];
  const publisher = generateKeyPairSync('ed25519').privateKey;
  const storeKey = generateKeyPairSync('ed25519').privateKey;

  const api = (method: string, path: string, body?: unknown) => s.api(method, `/api/admin/app-store${path}`, { token: admin, body });
  /** Puts a release of the app into the served folder and signs the index again, as a store's owner does. */
  const publish = async (patch: Record<string, unknown>) => {
    const { file, bytes } = await exampleRelease(APP, publisher, patch);
    writeFileSync(join(site, file), bytes);
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    const r = await api('POST', `/stores/${storeId}/refresh`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  const check = async () => {
    const r = await api('POST', '/updates/check');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const installedVersion = async () => (await s.api('GET', `/api/admin/app-plugins/apps/${APP}`, { token: admin })).body.version;
  const notices = async () =>
    (await s.api('GET', '/api/notifications?limit=50', { token: admin })).body.notifications.filter((n: any) => n.event === 'app_store.update_available');
  /** The bell is written by a bus listener: waits until `want` notices are there (or 5 s). */
  const noticesAtLeast = async (want: number) => {
    const until = Date.now() + 5000;
    for (;;) {
      const rows = await notices();
      if (rows.length >= want || Date.now() > until) return rows;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  before(async () => {
    const t = tempDir('filedock-store-updates-');
    cleanups.push(t.cleanup);
    site = t.dir;
    await buildExampleStore(site, publisher, storeKey);
    const url = await serveStoreFolder(servers, site);
    s = await startTestServer();
    admin = await s.login();
    let r = await s.api('POST', '/api/admin/app-plugins/keys', { token: admin, body: { publisher: EXAMPLE_PUBLISHER, public_key_pem: publicPem(publisher) } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    r = await api('POST', '/stores', { url, public_key_pem: publicPem(storeKey) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    storeId = r.body.id;
    r = await api('POST', `/apps/${APP}/install`, { store: storeId });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await s?.close();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('nothing newer: the check finds nothing and rings nothing', async () => {
    assert.deepEqual(await check(), { available: 0, upgraded: [], notified: [] });
    assert.deepEqual(await notices(), []);
  });

  test('1.1 published: one bell notice per app version for admins, the updates count is 1', async () => {
    await publish({ version: '1.1.0' });
    const report = await check();
    const again = await check();
    // The refresh started a check of its own: exactly one of the checks claimed the notice.
    assert.deepEqual([report.available, again.available], [1, 1]);
    assert.deepEqual(again.notified, [], 'the second check rings nothing');
    const rows = await noticesAtLeast(1);
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.equal(rows[0].title, 'Images to PDF 1.1.0 is available');
    assert.match(rows[0].body, /^1\.0\.0 is installed\. Upgrade it under Admin/);
    assert.deepEqual([rows[0].data.app_id, rows[0].data.installed, rows[0].data.version, rows[0].data.held], [APP, '1.0.0', '1.1.0', 'manual']);
    assert.equal((await api('GET', '/catalogue?updates=true&limit=1')).body.total, 1, 'the Apps tab badge');
    assert.equal(await installedVersion(), '1.0.0', 'automatic updates are off by default');
  });

  test('automatic updates on: the check upgrades the app itself and audits it; the count drops to 0', async () => {
    let r = await api('PUT', '/apps/not-installed/auto-update', { enabled: true });
    assert.deepEqual([r.status, r.body.error], [404, 'not_found']);
    assert.deepEqual((await api('GET', '/auto-updates')).body, { apps: [] });
    r = await api('PUT', `/apps/${APP}/auto-update`, { enabled: true });
    assert.deepEqual([r.status, r.body], [200, { id: APP, auto_update: true }]);
    assert.deepEqual((await api('GET', '/auto-updates')).body, { apps: [APP] });
    assert.equal((await auditRows(s, admin, 'app_store.auto_update', 1))[0].meta.enabled, true);

    const report = await check();
    assert.deepEqual(report.upgraded, [{ id: APP, from: '1.0.0', version: '1.1.0' }]);
    assert.equal(await installedVersion(), '1.1.0');
    const audit = (await auditRows(s, admin, 'app_store.auto_upgrade', 1))[0];
    assert.deepEqual([audit.resource, audit.meta.from, audit.meta.version, audit.meta.store], [`app:${APP}`, '1.0.0', '1.1.0', storeId]);
    assert.equal((await api('GET', '/catalogue?updates=true&limit=1')).body.total, 0);
    assert.equal((await notices()).length, 1, 'an automatic upgrade rings no notice of its own');
  });

  test('a version asking for a new permission: a notice that says so, nothing installed', async () => {
    await publish({ version: '1.2.0', permissions: ['files.read', 'files.write', 'ops', 'state'] });
    const report = await check();
    assert.deepEqual(report.upgraded, []);
    assert.equal(await installedVersion(), '1.1.0');
    const rows = await noticesAtLeast(2);
    assert.equal(rows.length, 2);
    assert.deepEqual([rows[0].data.version, rows[0].data.held, rows[0].data.permissions], ['1.2.0', 'permissions', ['state']]);
    assert.match(rows[0].body, /asks for new permissions \(state\), so it is not installed automatically/);
  });

  test('a new major version: not upgraded automatically, a notice says why', async () => {
    await publish({ version: '2.0.0' });
    const report = await check();
    assert.deepEqual(report.upgraded, []);
    assert.equal(await installedVersion(), '1.1.0');
    const rows = await noticesAtLeast(3);
    assert.equal(rows.length, 3);
    assert.deepEqual([rows[0].data.version, rows[0].data.held], ['2.0.0', 'major']);
    assert.match(rows[0].body, /new major version/);
  });

  test('automatic updates off again; while the store is off the check is refused', async () => {
    let r = await api('PUT', `/apps/${APP}/auto-update`, { enabled: false });
    assert.deepEqual(r.body, { id: APP, auto_update: false });
    assert.deepEqual((await api('GET', '/auto-updates')).body, { apps: [] });
    r = await api('PATCH', '/config', { enabled: false });
    assert.equal(r.status, 200);
    r = await api('POST', '/updates/check');
    assert.deepEqual([r.status, r.body.error], [503, 'app_store_disabled']);
    await api('PATCH', '/config', { enabled: true });
  });

  test('an uninstall, from the store or from the installed apps, forgets the choice', async () => {
    const autoAfter = async (uninstall: () => Promise<{ status: number }>) => {
      assert.equal((await api('PUT', `/apps/${APP}/auto-update`, { enabled: true })).status, 200);
      assert.equal((await uninstall()).status, 200);
      // The choice goes with the uninstall's audit event, just after the answer.
      const until = Date.now() + 5000;
      for (;;) {
        const apps = (await api('GET', '/auto-updates')).body.apps;
        if (apps.length === 0 || Date.now() > until) return apps;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    assert.deepEqual(await autoAfter(() => api('DELETE', `/apps/${APP}`)), []);
    assert.equal((await api('POST', `/apps/${APP}/install`, { store: storeId, version: '1.1.0' })).status, 201);
    assert.deepEqual(await autoAfter(() => s.api('DELETE', `/api/admin/app-plugins/apps/${APP}`, { token: admin })), []);
  });

  test('a language pack: a notice for 1.1 (kind language-pack), updated by itself to 1.2 once chosen, held at 2.0; its removal forgets the choice', async () => {
    const pack = async () => (await s.api('GET', '/api/i18n/languages')).body.languages.find((l: any) => l.id === 'de')?.version;
    /** The pack's release in the served folder, the index signed again and refreshed (which runs a check of its own). */
    const publishPack = async (version: string) => {
      const { file, bytes } = languagePack(GERMAN_PACK_DIR, { version });
      writeFileSync(join(site, file), bytes);
      await buildStore(site, storeKey, { name: 'Filedock example store' });
      assert.equal((await api('POST', `/stores/${storeId}/refresh`)).status, 200);
    };
    const packNotices = async (want: number) => {
      const until = Date.now() + 5000;
      for (;;) {
        const rows = (await notices()).filter((n: any) => n.data.app_id === 'de');
        if (rows.length >= want || Date.now() > until) return rows.map((n: any) => [n.data.kind, n.data.installed, n.data.version, n.data.held]);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    assert.equal((await api('POST', '/apps/de/install', { store: storeId, version: '1.0.0' })).status, 201);
    await publishPack('1.1.0');
    await check();
    assert.deepEqual(await packNotices(1), [['language-pack', '1.0.0', '1.1.0', 'manual']]);
    assert.equal(await pack(), '1.0.0', 'automatic updates are off by default');

    assert.deepEqual((await api('PUT', '/apps/de/auto-update', { enabled: true })).body, { id: 'de', auto_update: true });
    await publishPack('1.2.0');
    await check();
    assert.equal(await pack(), '1.2.0');
    const audit = (await auditRows(s, admin, 'app_store.auto_upgrade', 2)).find((a: any) => a.resource === 'app:de');
    assert.deepEqual([audit?.meta.from, audit?.meta.version], ['1.0.0', '1.2.0']);
    assert.equal((await packNotices(1)).length, 1, 'an automatic update rings nothing');

    await publishPack('2.0.0');
    await check();
    assert.deepEqual((await packNotices(2))[0], ['language-pack', '1.2.0', '2.0.0', 'major']);
    assert.equal(await pack(), '1.2.0');

    assert.equal((await api('DELETE', '/language-packs/de')).status, 200);
    const until = Date.now() + 5000;
    while ((await api('GET', '/auto-updates')).body.apps.includes('de') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual((await api('GET', '/auto-updates')).body.apps, []);
  });
});
