/**
 * Language packs on several instances sharing PostgreSQL (docs/app-store.md,
 * "Language packs"): two `service serve` processes on one database and the
 * example store on loopback. The German pack installed through instance A is
 * served by instance B without a restart (the change channel's notice, then B
 * re-reads the table), an account on B may pick it; removed through A, B stops
 * offering it. A third instance started afterwards finds it at start.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { CHILD_ADMIN as ADMIN, callJson, instanceEnv, spawnServer, type ChildServer } from '../helpers/child-server';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { closeAll, serveStoreFolder } from '../helpers/static-store';
import { tempDir } from '../helpers/tools';
import { buildExampleStore } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';

const skip = needPostgres();
describe('language packs across instances (PostgreSQL)', { skip: skip ?? false, timeout: 300_000 }, () => {
  let cluster: PgCluster;
  let url: string;
  let token = '';
  let storeId: number;
  const tmp = tempDir('filedock-store-lang-pg-');
  const key = join(tmp.dir, 'filedock.key');
  const files = join(tmp.dir, 'files');
  const servers: Server[] = [];
  const running: ChildServer[] = [];
  const start = async (name: string) => {
    const s = await spawnServer(instanceEnv({ url, keyFile: key, dataDir: join(tmp.dir, name), files }));
    running.push(s);
    return s;
  };
  /** The languages an instance offers, as `id:version`. */
  const languages = async (s: ChildServer) =>
    (await callJson(s.url, 'GET', '/api/i18n/languages')).body.languages.map((l: { id: string; version?: string }) => `${l.id}:${l.version ?? ''}`);
  /** Waits (10 s at most) until `s` offers `want`; the notice travels between processes. */
  const offersEventually = async (s: ChildServer, want: string[]) => {
    const until = Date.now() + 10_000;
    for (;;) {
      const got = await languages(s);
      if (got.join() === want.join() || Date.now() > until) return got;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase('storelang');
    writeFileSync(key, randomBytes(32).toString('base64'), { mode: 0o600 });
    mkdirSync(files);
    const storeKey = generateKeyPairSync('ed25519').privateKey;
    await buildExampleStore(join(tmp.dir, 'site'), generateKeyPairSync('ed25519').privateKey, storeKey);
    const storeUrl = await serveStoreFolder(servers, join(tmp.dir, 'site'));
    const a = await start('a');
    await start('b');
    token = (await callJson(a.url, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    const r = await callJson(a.url, 'POST', '/api/admin/app-store/stores', token, { url: storeUrl, public_key_pem: publicPem(storeKey) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    storeId = r.body.id;
  });
  after(async () => {
    for (const s of running) await s.stop().catch(() => {});
    closeAll(servers);
    await cluster?.destroy();
    tmp.cleanup();
  });

  test('installed through A: B offers Deutsch without a restart and takes it as an account language', async () => {
    const [a, b] = running;
    assert.deepEqual(await languages(b), ['en:', 'tr:']);
    const r = await callJson(a.url, 'POST', '/api/admin/app-store/apps/de/install', token, { store: storeId });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(await offersEventually(b, ['en:', 'tr:', 'de:1.0.0']), ['en:', 'tr:', 'de:1.0.0']);
    assert.equal((await callJson(b.url, 'GET', '/api/i18n/languages/de')).body.strings['common.cancel'], 'Abbrechen');
    const me = await callJson(b.url, 'PATCH', '/api/auth/me', token, { language: 'de' });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    // A server sentence on B in German: a path that does not exist.
    const missing = await callJson(b.url, 'GET', '/api/admin/app-store/stores/999999', token);
    assert.deepEqual([missing.body.error, missing.body.message], ['not_found', 'Nicht gefunden.']);
  });

  test('an instance started later finds the pack at start; removed through A, B and C stop offering it', async () => {
    const [a, b] = running;
    const c = await start('c');
    assert.deepEqual(await languages(c), ['en:', 'tr:', 'de:1.0.0']);
    assert.equal((await callJson(a.url, 'DELETE', '/api/admin/app-store/language-packs/de', token)).status, 200);
    assert.deepEqual(await offersEventually(b, ['en:', 'tr:']), ['en:', 'tr:']);
    assert.deepEqual(await offersEventually(c, ['en:', 'tr:']), ['en:', 'tr:']);
    assert.equal((await callJson(b.url, 'GET', '/api/i18n/languages/de')).status, 404);
  });
});
