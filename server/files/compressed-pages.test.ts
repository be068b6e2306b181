import { test } from 'node:test';
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { CompressedPages } from './compressed-pages';

const page = Buffer.from(
  JSON.stringify({ entries: Array.from({ length: 300 }, (_, i) => ({ name: `file-${i}.txt`, app_state: ['app1:waiting', `app2:step-${i % 7}`] })) }),
);
/** Waits until the copy is made (compression runs on the thread pool), at most ~2 s. */
async function made(c: CompressedPages, key: string, encoding: 'br' | 'gzip'): Promise<Buffer | undefined> {
  for (let i = 0; i < 200; i++) {
    const got = c.get(1, 'd', key, encoding);
    if (got) return got;
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
}

test('a page gets one copy per encoding that decodes to the page; small pages get none', async () => {
  const c = new CompressedPages();
  c.offer(1, 'd', 'k', 'br', [page.subarray(0, 100), page.subarray(100)]);
  c.offer(1, 'd', 'k', 'gzip', page);
  const br = await made(c, 'k', 'br');
  const gz = await made(c, 'k', 'gzip');
  assert.ok(br && gz);
  assert.deepEqual(brotliDecompressSync(br), page);
  assert.deepEqual(gunzipSync(gz), page);
  assert.ok(br.length < gz.length, `brotli ${br.length} B, gzip ${gz.length} B`);
  c.offer(1, 'd', 'small', 'br', Buffer.from('{"entries":[]}'));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(c.get(1, 'd', 'small', 'br'), undefined);
});

test('a copy begun before a change, or kept through a resync, is never served', async () => {
  const c = new CompressedPages();
  c.offer(1, 'd', 'k', 'br', page);
  c.changed(1, 'd', false); // while the pool compresses
  assert.equal(await made(c, 'k', 'br'), undefined);
  c.offer(1, 'd', 'k', 'br', page);
  assert.ok(await made(c, 'k', 'br'));
  c.changed(1, 'elsewhere', true);
  assert.equal(c.get(1, 'd', 'k', 'br'), undefined, 'a structural change anywhere in the storage');
  c.offer(1, 'd', 'k', 'gzip', page);
  assert.ok(await made(c, 'k', 'gzip'));
  c.clear();
  assert.equal(c.get(1, 'd', 'k', 'gzip'), undefined);
});
