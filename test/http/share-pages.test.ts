/**
 * Public share pages a visitor reads: the file page after a correct PIN
 * (never the PIN form again), folder rows aligned with and without
 * thumbnails, the image gallery and the text/Markdown preview, with downloads
 * counted as docs/public-links.md says. Real server, real local storage.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

const HTML = { accept: 'text/html' };
let s: TestServer;
let admin: string;
let root: { dir: string; cleanup: () => void };
let storageId: number;
const bin = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

const share = async (body: Record<string, unknown>) => {
  const r = await s.api('POST', '/api/files/share', { token: admin, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { token: string; pin?: string };
};
const count = async (token: string) => (await s.api('GET', `/api/files/share/${token}`)).body.download_count as number;
const page = async (path: string, headers: Record<string, string> = HTML) => {
  const r = await fetch(s.url + path, { headers, redirect: 'manual' });
  return { status: r.status, html: await r.text(), headers: r.headers };
};

before(async () => {
  root = tempDir('filedock-sharepages-');
  writeFileSync(join(root.dir, 'report.bin'), bin);
  mkdirSync(join(root.dir, 'album/sub'), { recursive: true });
  // A tiny valid PNG (1x1) so the folder has an image.
  const png = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2b2e5c30000000049454e44ae426082',
    'hex',
  );
  writeFileSync(join(root.dir, 'album/a.png'), png);
  writeFileSync(join(root.dir, 'album/b.png'), png);
  writeFileSync(
    join(root.dir, 'album/notes.md'),
    '# Trip notes\n\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n\n[bad](javascript:alert(1)) [good](https://example.test/)\n',
  );
  writeFileSync(join(root.dir, 'album/plain.txt'), 'a < b & c\n');
  writeFileSync(join(root.dir, 'album/data.bin'), bin);
  s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: root.dir, SERVICE_DEFAULT_STORAGE_NAME: 'Files' });
  admin = await s.login();
  storageId = s.server.catalogue.repo.all(DEFAULT_TENANT)[0].id;
  for (let i = 0; i < 200 && !(await s.server.catalogue.nodes.get({ id: storageId, tenant_id: 1 }, 'album/data.bin')); i++)
    await new Promise((r) => setTimeout(r, 25));
});
after(async () => {
  await s.close();
  root.cleanup();
});

describe('share pages', () => {
  test("link URLs carry this server's address without SERVICE_PUBLIC_URL, also for clients that send no Origin", async () => {
    const sh = await share({ path: 'Files://report.bin' });
    assert.equal((sh as { url?: string }).url, `${s.url}/s/${sh.token}`);
    const list = await s.api('GET', '/api/files/share', { token: admin });
    assert.equal(list.body.shares.find((x: { token: string }) => x.token === sh.token).url, `${s.url}/s/${sh.token}`);
  });

  test('PIN file link: the right PIN leads to the file page, which downloads; the page itself counts nothing', async () => {
    const sh = await share({ path: 'Files://report.bin', password: true, max_downloads: 3 });
    const posted = await fetch(`${s.url}/s/${sh.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...HTML },
      body: `pin=${sh.pin}`,
      redirect: 'manual',
    });
    assert.equal(posted.status, 303);
    const next = posted.headers.get('location')!;
    const p = await page(next);
    assert.equal(p.status, 200);
    assert.match(p.html, /<h1>report\.bin<\/h1>/);
    assert.match(p.html, /Size: 4\.9 KB/);
    assert.match(p.html, /Type: application\/octet-stream/);
    assert.match(p.html, /3 downloads left/);
    assert.doesNotMatch(p.html, /name="pin"|Wrong PIN/);
    const dl = /href="([^"]+dl=1)"/.exec(p.html)![1].replace(/&#38;/g, '&');
    assert.equal(await count(sh.token), 0);
    const file = await fetch(s.url + dl, { headers: HTML });
    assert.equal(file.status, 200);
    assert.match(file.headers.get('content-disposition') ?? '', /^attachment/);
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(bin));
    assert.equal(await count(sh.token), 1);
    // Reloading the file page (the same dt) shows the page again, with the count moved on.
    assert.match((await page(next)).html, /2 downloads left/);
    // Without a PIN or token: the PIN form.
    assert.equal((await page(`/s/${sh.token}`)).status, 401);
  });

  test('Turkish file page after the PIN', async () => {
    const sh = await share({ path: 'Files://report.bin', pin: '2468' });
    const p = await page(`/s/${sh.token}?pin=2468&lang=tr`);
    assert.match(p.html, /<html lang="tr">/);
    assert.match(p.html, /Boyut: 4\.9 KB/);
    assert.match(p.html, />İndir</);
  });

  test('folder page: every row has the same thumbnail slot; images and text open their view page', async () => {
    const sh = await share({ path: 'Files://album' });
    const p = await page(`/s/${sh.token}`);
    const rows = p.html.match(/<li>.*?<\/li>/g)!;
    assert.equal(rows.length, 6);
    for (const r of rows) assert.match(r, /^<li>(<i class="t"><\/i>|<img [^>]+>)<a /, r);
    assert.match(p.html, /6 items/);
    assert.match(p.html, /href="\/s\/[^/]+\/f\/a\.png\?view=1"/);
    assert.match(p.html, /href="\/s\/[^/]+\/f\/notes\.md\?view=1"/);
    assert.match(p.html, /href="\/s\/[^/]+\/f\/data\.bin"/);
  });

  test('gallery: an image page has previous/next and counts only when the image itself is fetched', async () => {
    const sh = await share({ path: 'Files://album', max_downloads: 10 });
    const a = await page(`/s/${sh.token}/f/a.png?view=1`);
    assert.equal(a.status, 200);
    assert.match(a.html, /<img class="full" alt="a\.png" src="\/s\/[^"]+\/f\/a\.png\?inline=1"/);
    assert.match(a.html, /rel="next"/);
    assert.doesNotMatch(a.html, /rel="prev"/);
    const b = await page(`/s/${sh.token}/f/b.png?view=1`);
    assert.match(b.html, /href="\/s\/[^"]+\/f\/a\.png\?view=1" rel="prev"/);
    assert.equal(await count(sh.token), 0);
    const img = await fetch(`${s.url}/s/${sh.token}/f/a.png?inline=1`);
    assert.equal(img.status, 200);
    assert.equal(img.headers.get('content-type'), 'image/png');
    await img.arrayBuffer();
    assert.equal(await count(sh.token), 1);
  });

  test('Markdown and text previews: rendered and escaped, scripts and javascript: links gone; one count each', async () => {
    const sh = await share({ path: 'Files://album', max_downloads: 10 });
    const md = await page(`/s/${sh.token}/f/notes.md?view=1`);
    assert.equal(md.status, 200);
    assert.match(md.html, /<article class="md"><h1>Trip notes<\/h1>/);
    assert.doesNotMatch(md.html, /<script>alert|<img src=x|href="javascript:/i);
    assert.match(md.html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(md.html, /<a href="https:\/\/example.test\/">good<\/a>/);
    // The page's CSP still allows no script but its nonce.
    assert.match(md.headers.get('content-security-policy') ?? '', /script-src 'nonce-[^']+';/);
    const tx = await page(`/s/${sh.token}/f/plain.txt?view=1`);
    assert.match(tx.html, /<pre class="tx">a &#60; b &#38; c\n<\/pre>/);
    assert.equal(await count(sh.token), 2);
    // A file with no view page still downloads from the row link.
    const raw = await fetch(`${s.url}/s/${sh.token}/f/data.bin?view=1`, { headers: HTML });
    assert.ok(Buffer.from(await raw.arrayBuffer()).equals(bin));
  });

  test('a capped link stops previews like downloads', async () => {
    const sh = await share({ path: 'Files://album', max_downloads: 1 });
    assert.equal((await page(`/s/${sh.token}/f/plain.txt?view=1`)).status, 200);
    const second = await page(`/s/${sh.token}/f/plain.txt?view=1`);
    assert.equal(second.status, 404);
  });
});
