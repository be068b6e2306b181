/**
 * Link previews must not use up links (issue 39, item 1). A chat app's
 * preview bot and a browser get the file link's landing page (OpenGraph
 * card, thumbnail, Download button), which counts nothing; the og:image
 * thumbnail counts nothing; curl-like clients still get the bytes from
 * `GET /s/{token}` and those count; HEAD never counts. Real server, real
 * local storage, real requests.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { sqlRow } from '../helpers/sql';
import { DEFAULT_TENANT } from '../../server/db';

const BOTS = {
  whatsapp: 'WhatsApp/2.23.20.0',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  slackImg: 'Slack-ImgProxy (+https://api.slack.com/robots)',
  teams: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/51.0.2704.103 Safari/537.36 SkypeUriPreview Preview/0.5',
  discord: 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  telegram: 'TelegramBot (like TwitterBot)',
  imessage:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  facebook: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  x: 'Twitterbot/1.0',
};
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const BROWSER = { 'user-agent': CHROME, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const CURL = { 'user-agent': 'curl/8.5.0', accept: '*/*' };
const NAME = "Tom & Jerry's.png";

let s: TestServer;
let admin: string;
let root: { dir: string; cleanup: () => void };
let png: Buffer;

const share = async (body: Record<string, unknown>) => {
  const r = await s.api('POST', '/api/files/share', { token: admin, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { id: number; token: string; url: string; pin?: string };
};
const downloads = async (id: number) => Number((await sqlRow<{ downloads: number }>(s.server.db, 'SELECT downloads FROM shares WHERE id = ?', id))!.downloads);
const get = async (path: string, headers: Record<string, string>, method = 'GET') => {
  const r = await fetch(path.startsWith('http') ? path : s.url + path, { method, headers });
  const body = Buffer.from(await r.arrayBuffer());
  return { status: r.status, type: r.headers.get('content-type') ?? '', body, html: body.toString('utf8'), headers: r.headers };
};
const meta = (html: string, key: string) => new RegExp(`<meta (?:property|name)="${key}" content="([^"]*)">`).exec(html)?.[1];
const unescapeRefs = (v: string) => v.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));

before(async () => {
  root = tempDir('filedock-previews-');
  png = await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .png()
    .toBuffer();
  mkdirSync(join(root.dir, 'album'));
  writeFileSync(join(root.dir, 'album', 'one.txt'), 'one');
  s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: root.dir, SERVICE_DEFAULT_STORAGE_NAME: 'Files' });
  admin = await s.login();
  // Uploaded, so the write gate queues its thumbnail; wait (bounded) until the thumbnail job made it.
  const form = new FormData();
  form.append('path', '/Files');
  form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), NAME);
  const up = await s.api('POST', '/api/files/upload', { token: admin, raw: form });
  assert.equal(up.status, 200, JSON.stringify(up.body));
  const storageId = s.server.catalogue.repo.all(DEFAULT_TENANT)[0].id;
  for (let i = 0; i < 600 && (await s.server.catalogue.nodes.get({ id: storageId, tenant_id: 1 }, NAME))?.thumb_state !== 'ready'; i++)
    await new Promise((r) => setTimeout(r, 50));
  assert.equal((await s.server.catalogue.nodes.get({ id: storageId, tenant_id: 1 }, NAME))?.thumb_state, 'ready', 'the thumbnail was made');
});
after(async () => {
  await s.close();
  root.cleanup();
});

describe('link previews', () => {
  test('a link limited to one download survives every chat preview and a browser visit, then downloads exactly once', async () => {
    const l = await share({ path: `/Files/${NAME}`, max_downloads: 1 });
    for (const [app, ua] of Object.entries(BOTS)) {
      // Bots send all sorts of Accept headers, and some follow any link they see (the Download button's too).
      for (const path of [`/s/${l.token}`, `/s/${l.token}?dl=1`, `/s/${l.token}?inline=1`]) {
        const r = await get(path, { 'user-agent': ua, accept: '*/*' });
        assert.equal(r.status, 200, `${app} ${path}`);
        assert.match(r.type, /^text\/html/, `${app} ${path}`);
        assert.equal(unescapeRefs(meta(r.html, 'og:title') ?? ''), NAME, app);
      }
      assert.equal(await downloads(l.id), 0, `${app} used nothing`);
    }
    // The card: title, description (size and type), the link's own address, the thumbnail as an absolute URL.
    const card = await get(`/s/${l.token}`, { 'user-agent': BOTS.whatsapp });
    assert.equal(meta(card.html, 'og:url'), `${s.url}/s/${l.token}`);
    assert.match(meta(card.html, 'og:description') ?? '', /image\/png/);
    assert.match(card.html, /<meta property="og:title" content="Tom &#38; Jerry&#39;s\.png">/, 'escaped');
    assert.doesNotMatch(card.html, /<script/, 'no script on the landing page');
    assert.match(card.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.match(card.headers.get('vary') ?? '', /User-Agent/i);
    const image = meta(card.html, 'og:image')!;
    assert.ok(image.startsWith(`${s.url}/s/${l.token}?`), image);
    // The bots fetch the card's image (following the redirect to the stamped thumbnail): no count either.
    for (const ua of [BOTS.whatsapp, BOTS.slackImg, BOTS.discord]) {
      const img = await get(unescapeRefs(image), { 'user-agent': ua, accept: 'image/*' });
      assert.equal(img.status, 200);
      assert.match(img.type, /^image\/jpeg/);
      assert.ok(img.body.length > 100);
    }
    assert.equal(await downloads(l.id), 0, 'the thumbnail counts nothing');

    // A browser (Accept: text/html) lands on the page: name, size, type, thumbnail, Download button; no count.
    const page = await get(`/s/${l.token}`, BROWSER);
    assert.equal(page.status, 200);
    assert.match(page.html, /<h1>Tom &#38; Jerry&#39;s\.png<\/h1>/);
    assert.match(page.html, /1 download left/);
    assert.match(page.html, /<img class="pv" [^>]*src="\/s\/[^"]+\?thumb=1"/);
    const button = /<a class="btn" href="([^"]+)" download>Download<\/a>/.exec(page.html)?.[1];
    assert.equal(unescapeRefs(button ?? ''), `/s/${l.token}?dl=1`);
    // HEAD never counts, whoever sends it.
    for (const h of [CURL, BROWSER, { 'user-agent': BOTS.whatsapp }]) assert.equal((await get(`/s/${l.token}`, h, 'HEAD')).status, 200);
    assert.equal(await downloads(l.id), 0, 'pages, previews and HEAD used nothing');

    // curl (no HTML asked) still gets the bytes from GET /s/{token}, exactly once.
    const file = await get(`/s/${l.token}`, CURL);
    assert.equal(file.status, 200);
    assert.ok(file.body.equals(png), 'the bytes');
    assert.equal(await downloads(l.id), 1);
    const again = await get(`/s/${l.token}`, CURL);
    assert.equal(again.status, 404, 'used up');
    assert.match(again.html, /Link used up/);
  });

  test("a browser's Download button counts, once per download", async () => {
    const l = await share({ path: `/Files/${NAME}`, max_downloads: 2 });
    assert.match((await get(`/s/${l.token}`, BROWSER)).html, /2 downloads left/);
    const dl = await get(`/s/${l.token}?dl=1`, BROWSER);
    assert.equal(dl.status, 200);
    assert.match(dl.headers.get('content-disposition') ?? '', /^attachment/);
    assert.ok(dl.body.equals(png));
    assert.equal(await downloads(l.id), 1);
    assert.match((await get(`/s/${l.token}`, BROWSER)).html, /1 download left/);
    // wget and download managers ask for no HTML: the bytes.
    const wget = await get(`/s/${l.token}`, { 'user-agent': 'Wget/1.21.3', accept: '*/*' });
    assert.ok(wget.body.equals(png));
    assert.equal(await downloads(l.id), 2);
  });

  test('folder and PIN links: a preview bot gets the browse page or the PIN form, never bytes', async () => {
    const folder = await share({ path: '/Files/album', max_downloads: 1 });
    for (const path of [`/s/${folder.token}`, `/s/${folder.token}?zip=1`, `/s/${folder.token}/f/one.txt`, `/s/${folder.token}/f/one.txt?view=1`]) {
      const r = await get(path, { 'user-agent': BOTS.telegram, accept: '*/*' });
      assert.equal(r.status, 200, path);
      assert.match(r.type, /^text\/html/, path);
    }
    assert.equal(await downloads(folder.id), 0);
    // Browsers still browse the folder as before; curl still gets the ZIP.
    assert.match((await get(`/s/${folder.token}`, BROWSER)).html, /one\.txt/);
    const zip = await get(`/s/${folder.token}`, CURL);
    assert.deepEqual([zip.status, zip.type], [200, 'application/zip']);
    assert.equal(await downloads(folder.id), 1);

    const pinned = await share({ path: `/Files/${NAME}`, password: true, max_downloads: 1 });
    const form = await get(`/s/${pinned.token}`, { 'user-agent': BOTS.whatsapp, accept: '*/*' });
    assert.equal(form.status, 401);
    assert.match(form.html, /name="pin"/);
    assert.doesNotMatch(form.html, /Jerry|og:/, 'a PIN link tells a preview nothing about the file');
    // After the PIN, the browser's file page works as before (no card on PIN links), and downloads once.
    const p = await get(`/s/${pinned.token}?pin=${pinned.pin}`, BROWSER);
    assert.equal(p.status, 200);
    assert.doesNotMatch(p.html, /og:title/);
    assert.equal(await downloads(pinned.id), 0);
    const bytes = await get(`/s/${pinned.token}?pin=${pinned.pin}`, CURL);
    assert.ok(bytes.body.equals(png));
    assert.equal(await downloads(pinned.id), 1);
  });
});
