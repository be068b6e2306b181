/**
 * Listing pages in gzip: a client that accepts it gets the page's compressed
 * copy from its second request on (the first goes out plain while the copy is
 * made off the event loop); the copy decodes to the same JSON, and a change to
 * the folder is never hidden behind an old copy. Small pages stay plain.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, uploadFile } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET with the given Accept-Encoding; the body decoded, and whether it came gzipped. */
function get(url: string, token: string, encoding: string): Promise<{ gzip: boolean; vary: string; json: any; wire: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': encoding } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(parts);
        const gzip = res.headers['content-encoding'] === 'gzip';
        try {
          resolve({ gzip, vary: String(res.headers.vary ?? ''), json: JSON.parse((gzip ? gunzipSync(raw) : raw).toString()), wire: raw.length });
        } catch (e) {
          reject(e);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('a big listing page is served gzipped from its second request, equal to the plain page, and never stale', async () => {
  const { dir, cleanup } = tempDir();
  mkdirSync(join(dir, 'many'));
  for (let i = 0; i < 400; i++) writeFileSync(join(dir, 'many', `document-${String(i).padStart(4, '0')}.txt`), 'x');
  writeFileSync(join(dir, 'one.txt'), 'x');
  const s = await startTestServer();
  try {
    const admin = await s.login();
    assert.equal((await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Docs', driver: 'local', config: { path: dir } } })).status, 200);
    const url = `${s.url}/api/files/manager?path=/Docs/many&limit=1000`;
    let first = await get(url, admin, 'gzip, deflate, br');
    for (let i = 0; i < 100 && first.json.total !== 400; i++) {
      await sleep(50);
      first = await get(url, admin, 'gzip, deflate, br');
    }
    assert.equal(first.json.total, 400);
    assert.match(first.vary, /accept-encoding/i);
    let zipped = first;
    for (let i = 0; i < 100 && !zipped.gzip; i++) {
      await sleep(20);
      zipped = await get(url, admin, 'gzip, deflate, br');
    }
    assert.ok(zipped.gzip, 'the page comes gzipped once its copy is made');
    assert.deepEqual(zipped.json, first.json);
    const plain = await get(url, admin, 'identity');
    assert.equal(plain.gzip, false, 'a client that does not accept gzip gets plain JSON');
    assert.deepEqual(plain.json, first.json);
    assert.ok(zipped.wire * 4 < plain.wire, `gzip ${zipped.wire} B vs plain ${plain.wire} B`);

    // A change: the next page shows it, gzipped or not.
    await uploadFile(s, admin, '/Docs/many', 'aaa-new.txt', Buffer.from('new'));
    const after = await get(url, admin, 'gzip');
    assert.equal(after.json.total, 401);
    assert.equal(after.json.entries[0].name, 'aaa-new.txt');

    const small = await get(`${s.url}/api/files/manager?path=/Docs`, admin, 'gzip');
    await sleep(100);
    assert.equal((await get(`${s.url}/api/files/manager?path=/Docs`, admin, 'gzip')).gzip, false, 'a small page is not worth compressing');
    assert.equal(small.json.path, '/Docs');
  } finally {
    await s.close();
    cleanup();
  }
});
