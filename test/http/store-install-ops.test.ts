/**
 * Installs and upgrades as operations (issue 33; docs/app-store.md, "Installs as operations"): with
 * `Prefer: respond-async` the route answers 202 and an operation that reports its download's bytes and
 * ends with what was installed; refusals that need nothing downloaded still answer at once; an install
 * whose store stalls mid-package is cancelled like any operation and leaves nothing installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { closeAll, listenLoopback } from '../helpers/static-store';
import { buildExampleStore, EXAMPLE_PUBLISHER } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';

describe('store installs as operations', () => {
  let s: TestServer;
  let admin: string;
  let site: string;
  let storeId: number;
  const servers: Server[] = [];
  const cleanups: Array<() => void> = [];
  /** Package downloads held half-sent (the fill-and-sign package). */
  const stalled: ServerResponse[] = [];
  const publisher = generateKeyPairSync('ed25519').privateKey;
  const storeKey = generateKeyPairSync('ed25519').privateKey;
  const async = (path: string, body: unknown) => s.api('POST', `/api/admin/app-store${path}`, { token: admin, body, headers: { prefer: 'respond-async' } });
  const op = (id: string) => s.api('GET', `/api/files/ops/${id}`, { token: admin });
  const settled = async (id: string) => {
    for (let i = 0; i < 600; i++) {
      const r = await op(id);
      if (['completed', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`operation ${id} did not end`);
  };

  before(async () => {
    const t = tempDir('filedock-store-ops-');
    cleanups.push(t.cleanup);
    site = t.dir;
    await buildExampleStore(site, publisher, storeKey);
    const url = await listenLoopback(servers, (req, res) => {
      const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname).slice(1);
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(site, path));
      } catch {
        return void res.writeHead(404).end();
      }
      res.writeHead(200, { 'content-length': bytes.length });
      if (!path.startsWith('fill-and-sign-')) return void res.end(bytes);
      res.write(bytes.subarray(0, 1000));
      stalled.push(res);
    });
    s = await startTestServer({ SERVICE_APP_STORE_TIMEOUT: '60s' });
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/keys', { token: admin, body: { publisher: EXAMPLE_PUBLISHER, public_key_pem: publicPem(publisher) } }))
        .status,
      201,
    );
    const c = await s.api('POST', '/api/admin/app-store/stores', { token: admin, body: { url, public_key_pem: publicPem(storeKey) } });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    storeId = c.body.id;
  });
  after(async () => {
    for (const r of stalled) r.destroy();
    await s?.close();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('202 and an operation: the package downloaded with its bytes counted, then installed', async () => {
    const r = await async('/apps/images-to-pdf/install', { store: storeId });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.headers.get('preference-applied'), 'respond-async');
    const done = await settled(r.body.operation_id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.kind, 'app_store.install');
    const size = statSync(join(site, 'images-to-pdf-1.0.0.zip')).size;
    assert.deepEqual([done.bytes_done, done.bytes_total], [size, size]);
    assert.equal(done.result.version, '1.0.0');
    assert.equal((await s.api('GET', '/api/admin/app-plugins/apps/images-to-pdf', { token: admin })).body.version, '1.0.0');
  });

  test('a refusal that needs nothing downloaded answers at once, with no operation', async () => {
    const r = await async('/apps/images-to-pdf/install', { store: storeId });
    assert.deepEqual([r.status, r.body.error, r.body.details?.reason], [409, 'intent_installed', 'already_installed']);
    const ops = (await s.api('GET', '/api/files/ops', { token: admin })).body.ops.filter((o: any) => o.kind === 'app_store.install');
    assert.equal(ops.length, 1, 'only the first install made one');
    assert.equal((await async('/apps/nope/install', { store: storeId })).status, 404);
  });

  test('an install whose store stalls mid-package is cancelled like any operation; nothing is installed', async () => {
    const r = await async('/apps/fill-and-sign/install', { store: storeId });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    for (let i = 0; i < 200 && stalled.length === 0; i++) await new Promise((res) => setTimeout(res, 25));
    assert.equal(stalled.length, 1, 'the download started');
    for (let i = 0; i < 200 && (await op(r.body.operation_id)).body.bytes_done < 1000; i++) await new Promise((res) => setTimeout(res, 25));
    assert.equal((await op(r.body.operation_id)).body.bytes_done, 1000, 'the part sent is counted');
    assert.equal((await s.api('POST', `/api/files/ops/${r.body.operation_id}/cancel`, { token: admin })).status, 200);
    const done = await settled(r.body.operation_id);
    assert.equal(done.status, 'cancelled', JSON.stringify(done));
    assert.equal((await s.api('GET', '/api/admin/app-plugins/apps/fill-and-sign', { token: admin })).status, 404);
  });
});
