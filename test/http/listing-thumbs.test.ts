import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('listings carry signed thumbnail URLs once a thumbnail is ready, and the page refreshes by itself', async () => {
  const { dir, cleanup } = tempDir();
  const s = await startTestServer();
  try {
    const admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Pics', driver: 'local', config: { path: dir } } });
    assert.equal(st.status, 200);
    const jpeg = await sharp({ create: { width: 800, height: 600, channels: 3, background: { r: 200, g: 40, b: 40 } } })
      .jpeg()
      .toBuffer();
    const form = new FormData();
    form.append('path', '/Pics');
    form.append('file', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'red.jpg');
    const up = await fetch(`${s.url}/api/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${admin}` }, body: form });
    assert.equal(up.status, 200, await up.clone().text());
    writeFileSync(join(dir, 'notes.txt'), 'no thumbnail here');
    let entry: { name: string; thumb_url: string } | undefined;
    for (let i = 0; i < 200; i++) {
      const l = await s.api('GET', '/api/files/manager?path=/Pics', { token: admin });
      entry = l.body.entries.find((e: { name: string }) => e.name === 'red.jpg');
      if (entry?.thumb_url) break;
      await sleep(50);
    }
    assert.match(entry!.thumb_url, /^\/api\/files\/thumb\/\d+\?exp=\d+&sig=[0-9a-f]{64}$/);
    // The stamp alone is the credential: no cookie, no bearer.
    const img = await fetch(s.url + entry!.thumb_url);
    assert.equal(img.status, 200);
    assert.equal(img.headers.get('content-type'), 'image/jpeg');
    const meta = await sharp(Buffer.from(await img.arrayBuffer())).metadata();
    assert.ok(Math.max(meta.width!, meta.height!) <= 320);
    const tampered = entry!.thumb_url.replace(/sig=./, (m) => (m.endsWith('0') ? 'sig=1' : 'sig=0'));
    assert.equal((await fetch(s.url + tampered)).status, 401);
    const search = await s.api('GET', '/api/files/search?q=red', { token: admin });
    assert.match(search.body.entries[0].thumb_url, /sig=/);
  } finally {
    await s.close();
    cleanup();
  }
});
