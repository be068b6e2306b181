/**
 * Compressed listing pages: a client that accepts brotli (every browser)
 * gets the page's brotli copy from its second request on, one accepting only
 * gzip the gzip copy (the first goes out plain while the copy is made off the
 * event loop); both decode to the same JSON, and a change to the folder is
 * never hidden behind an old copy. Small pages stay plain.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, uploadFile } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BROWSER = 'gzip, deflate, br, zstd';

/** GET with the given Accept-Encoding; the body decoded, its Content-Encoding and its size on the wire. */
function get(url: string, token: string, accept: string): Promise<{ encoding: string; vary: string; json: any; wire: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': accept } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(parts);
        const encoding = String(res.headers['content-encoding'] ?? 'identity');
        try {
          const text = encoding === 'br' ? brotliDecompressSync(raw) : encoding === 'gzip' ? gunzipSync(raw) : raw;
          resolve({ encoding, vary: String(res.headers.vary ?? ''), json: JSON.parse(text.toString()), wire: raw.length });
        } catch (e) {
          reject(e);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Asks until the response comes in `encoding` (its copy is made on the thread pool), at most ~2 s. */
async function compressed(url: string, token: string, accept: string, encoding: string) {
  let r = await get(url, token, accept);
  for (let i = 0; i < 100 && r.encoding !== encoding; i++) {
    await sleep(20);
    r = await get(url, token, accept);
  }
  assert.equal(r.encoding, encoding, `Accept-Encoding: ${accept}`);
  return r;
}

test('a big listing page comes in brotli to browsers and in gzip to gzip-only clients, equal to the plain page, and never stale', async () => {
  const { dir, cleanup } = tempDir();
  mkdirSync(join(dir, 'many'));
  for (let i = 0; i < 400; i++) writeFileSync(join(dir, 'many', `document-${String(i).padStart(4, '0')}.txt`), 'x');
  writeFileSync(join(dir, 'one.txt'), 'x');
  const s = await startTestServer();
  try {
    const admin = await s.login();
    assert.equal((await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Docs', driver: 'local', config: { path: dir } } })).status, 200);
    const url = `${s.url}/api/files/manager?path=/Docs/many&limit=1000`;
    let first = await get(url, admin, BROWSER);
    for (let i = 0; i < 100 && first.json.total !== 400; i++) {
      await sleep(50);
      first = await get(url, admin, BROWSER);
    }
    assert.equal(first.json.total, 400);
    assert.match(first.vary, /accept-encoding/i);

    const br = await compressed(url, admin, BROWSER, 'br');
    assert.deepEqual(br.json, first.json);
    const gz = await compressed(url, admin, 'gzip', 'gzip');
    assert.deepEqual(gz.json, first.json);
    assert.match(gz.vary, /accept-encoding/i);
    assert.equal((await get(url, admin, 'br;q=0, gzip')).encoding, 'gzip', 'a refused encoding is not sent');
    const plain = await get(url, admin, 'identity');
    assert.equal(plain.encoding, 'identity', 'a client that accepts neither gets plain JSON');
    assert.deepEqual(plain.json, first.json);
    assert.ok(br.wire < gz.wire && gz.wire * 4 < plain.wire, `brotli ${br.wire} B, gzip ${gz.wire} B, plain ${plain.wire} B`);

    // A change: the next page shows it in every encoding, and fresh copies follow.
    await uploadFile(s, admin, '/Docs/many', 'aaa-new.txt', Buffer.from('new'));
    for (const accept of [BROWSER, 'gzip']) {
      const after = await get(url, admin, accept);
      assert.equal(after.json.total, 401, accept);
      assert.equal(after.json.entries[0].name, 'aaa-new.txt', accept);
    }
    const fresh = await compressed(url, admin, BROWSER, 'br');
    assert.equal(fresh.json.total, 401);
    assert.equal(fresh.json.entries[0].name, 'aaa-new.txt');

    const small = await get(`${s.url}/api/files/manager?path=/Docs`, admin, BROWSER);
    await sleep(100);
    assert.equal((await get(`${s.url}/api/files/manager?path=/Docs`, admin, BROWSER)).encoding, 'identity', 'a small page is not worth compressing');
    assert.equal(small.json.path, '/Docs');
  } finally {
    await s.close();
    cleanup();
  }
});
