/**
 * The catalogue's categories and pictures (issue 33; docs/app-store.md, "Categories and pictures"): the
 * example store's entries carry categories and an icon, one app a screenshot; pictures are read through
 * the service only when the signed index names them, checked against its sha256 and read as PNG, JPEG or
 * WebP by their bytes, kept an hour, at most 10 waiting per person; `service store build` refuses what a
 * reader would refuse.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { closeAll, listenLoopback, serveStoreFolder } from '../helpers/static-store';
import { buildExampleStore, EXAMPLE_PUBLISHER } from '../../scripts/build-example-store';
import { publicPem } from '../../scripts/build-example-apps';
import { buildStore } from '../../server/store';

describe('store categories and pictures', () => {
  let s: TestServer;
  let admin: string;
  let site: string;
  let storeId: number;
  const servers: Server[] = [];
  const cleanups: Array<() => void> = [];
  const seen: Array<{ path: string; status: number }> = [];
  const publisher = generateKeyPairSync('ed25519').privateKey;
  const storeKey = generateKeyPairSync('ed25519').privateKey;
  const api = (path: string) => s.api('GET', `/api/admin/app-store${path}`, { token: admin });
  const picture = (url: string) => fetch(`${s.url}${url}`, { headers: { authorization: `Bearer ${admin}` } });
  const screenshot = () =>
    sharp({ create: { width: 320, height: 200, channels: 3, background: '#3366aa' } })
      .webp()
      .toBuffer();

  before(async () => {
    const t = tempDir('filedock-store-media-');
    cleanups.push(t.cleanup);
    site = t.dir;
    await buildExampleStore(site, publisher, storeKey);
    writeFileSync(join(site, 'media/images-to-pdf-1.webp'), await screenshot());
    const meta = JSON.parse(readFileSync(join(site, 'meta/images-to-pdf.json'), 'utf8'));
    writeFileSync(
      join(site, 'meta/images-to-pdf.json'),
      JSON.stringify({ ...meta, screenshots: [{ file: 'media/images-to-pdf-1.webp', caption: { en: 'Three photos become one PDF' } }] }),
    );
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    const url = await serveStoreFolder(servers, site, seen);
    s = await startTestServer();
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
    await s?.close();
    closeAll(servers);
    for (const c of cleanups) c();
  });

  test('entries carry their categories and picture addresses; a category filters the catalogue', async () => {
    const all = (await api('/catalogue')).body.entries;
    const byId = Object.fromEntries(all.map((e: any) => [e.id, e]));
    assert.deepEqual(byId['images-to-pdf'].categories, ['documents', 'media']);
    assert.match(byId['images-to-pdf'].icon, new RegExp(`^/api/admin/app-store/stores/${storeId}/media\\?file=media%2Fimages-to-pdf-icon\\.png$`));
    assert.deepEqual(
      byId['images-to-pdf'].screenshots.map((x: any) => x.caption.en),
      ['Three photos become one PDF'],
    );
    assert.equal(byId.de.icon, null);
    assert.deepEqual(
      (await api('/catalogue?category=storage')).body.entries.map((e: any) => e.id),
      ['http-index'],
    );
    assert.deepEqual((await api('/catalogue?category=documents')).body.entries.map((e: any) => e.id).sort(), ['fill-and-sign', 'images-to-pdf']);
    assert.equal((await api('/catalogue?category=games')).status, 400);
  });

  test('a picture the index names is served as the bytes the store signed, kept an hour; anything else is not fetched', async () => {
    const e = (await api('/catalogue?q=images')).body.entries[0];
    const before = seen.length;
    const r = await picture(e.icon);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'image/png');
    assert.equal(r.headers.get('content-security-policy'), "default-src 'none'");
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(readFileSync(join(site, 'media/images-to-pdf-icon.png'))));
    const shot = await picture(e.screenshots[0].url);
    assert.deepEqual([shot.status, shot.headers.get('content-type')], [200, 'image/webp']);
    await shot.arrayBuffer();
    assert.equal((await picture(e.icon)).status, 200);
    assert.equal(seen.slice(before).filter((x) => x.path === 'media/images-to-pdf-icon.png').length, 1, 'the second answer came from the copy');
    for (const file of ['index.json', '../index.json', 'media/unlisted.png', 'images-to-pdf-1.0.0.zip']) {
      const n = seen.length;
      const x = await picture(`/api/admin/app-store/stores/${storeId}/media?file=${encodeURIComponent(file)}`);
      assert.equal(x.status, 404, file);
      assert.equal(seen.length, n, `${file}: nothing asked of the store`);
    }
  });

  test('a picture changed on the store after signing, or one that is not a picture, is refused', async () => {
    // An icon not read yet (a picture read before stays the copy the service checked).
    const icon = join(site, 'media/fill-and-sign-icon.png');
    writeFileSync(icon, Buffer.alloc(readFileSync(icon).length, 1));
    const e = (await api('/catalogue?q=fill')).body.entries[0];
    let r = await s.api('GET', e.icon, { token: admin });
    assert.deepEqual([r.status, r.body.error, r.body.details?.reason], [502, 'store_sha_mismatch', 'sha_mismatch']);
    // Signed as it is, but text: the bytes decide the type, never the name.
    writeFileSync(icon, '<svg onload="alert(1)"/>');
    await buildStore(site, storeKey, { name: 'Filedock example store' });
    assert.equal((await s.api('POST', `/api/admin/app-store/stores/${storeId}/refresh`, { token: admin })).status, 200);
    r = await s.api('GET', e.icon, { token: admin });
    assert.deepEqual([r.status, r.body.error, r.body.details?.reason], [502, 'store_invalid', 'not_a_picture']);
  });

  test('at most 10 pictures wait per person: the eleventh is refused at once', async () => {
    const held: ServerResponse[] = [];
    const slowUrl = await listenLoopback(servers, (req, res) => {
      const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname).slice(1);
      if (path.startsWith('media/')) return void held.push(res);
      res.end(readFileSync(join(site, path)));
    });
    const c = await s.api('POST', '/api/admin/app-store/stores', { token: admin, body: { url: slowUrl, public_key_pem: publicPem(storeKey) } });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const url = `/api/admin/app-store/stores/${c.body.id}/media?file=${encodeURIComponent('media/images-to-pdf-icon.png')}`;
    const waiting = Array.from({ length: 10 }, () => picture(url));
    for (let i = 0; i < 200 && held.length < 10; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(held.length, 10, 'ten requests reached the store');
    const eleventh = await s.api('GET', url, { token: admin });
    assert.deepEqual([eleventh.status, eleventh.body.error], [429, 'rate_limited']);
    const icon = readFileSync(join(site, 'media/images-to-pdf-icon.png'));
    for (const res of held) res.end(icon);
    assert.deepEqual(
      (await Promise.all(waiting)).map((r) => r.status),
      Array(10).fill(200),
    );
    assert.equal((await picture(url)).status, 200, 'room again');
  });

  test('build refuses what a reader would: a category not on the list, a picture over 5 MiB', async () => {
    const t = tempDir('filedock-store-media-build-');
    cleanups.push(t.cleanup);
    await buildExampleStore(t.dir, publisher, storeKey);
    writeFileSync(join(t.dir, 'meta/http-index.json'), JSON.stringify({ categories: ['games'] }));
    await assert.rejects(buildStore(t.dir, storeKey), /the index would not be read: .*categories/);
    writeFileSync(join(t.dir, 'media/big.png'), Buffer.alloc(5 * 1024 * 1024 + 1));
    writeFileSync(join(t.dir, 'meta/http-index.json'), JSON.stringify({ icon: 'media/big.png' }));
    await assert.rejects(buildStore(t.dir, storeKey), /the index would not be read: .*icon\.size/);
  });
});
