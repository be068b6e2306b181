/**
 * File requests without JavaScript: the drop page's plain multipart form,
 * posted like a browser (or curl) would, with every rule of the link still
 * applying; and in Chromium with JavaScript disabled. Also the `ETag` header
 * on the chunk answers of both upload APIs.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { sqlRow } from '../helpers/sql';
import { DEFAULT_TENANT } from '../../server/db';

const MiB = 1024 * 1024;

describe('file requests as a plain HTML form', () => {
  let s: TestServer;
  let admin: string;
  let root: { dir: string; cleanup: () => void };
  let storageId: number;

  before(async () => {
    root = tempDir('filedock-dropform-');
    s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: root.dir, SERVICE_DEFAULT_STORAGE_NAME: 'Files' });
    admin = await s.login();
    storageId = s.server.catalogue.repo.all(DEFAULT_TENANT)[0].id;
  });
  after(async () => {
    await s.close();
    root.cleanup();
  });

  let n = 0;
  /** A file request on a fresh folder; returns its token and folder on disk. */
  const drop = async (body: Record<string, unknown> = {}) => {
    const folder = `in${++n}`;
    mkdirSync(join(root.dir, folder));
    const r = await s.api('POST', '/api/files/share', { token: admin, body: { path: `/Files/${folder}`, kind: 'drop', ...body } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return { token: r.body.token as string, dir: join(root.dir, folder) };
  };
  /** Posts the form as a browser without JavaScript does: fields first, then the files, multipart. */
  const post = async (token: string, fields: Record<string, string>, files: Array<[string, Buffer]>, lang = 'en') => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    for (const [name, bytes] of files) form.append('files', new Blob([new Uint8Array(bytes)]), name);
    const r = await fetch(`${s.url}/d/${token}?lang=${lang}`, { method: 'POST', body: form, headers: { accept: 'text/html' } });
    return { status: r.status, html: await r.text(), type: r.headers.get('content-type') ?? '' };
  };
  const submissions = (dir: string) => readdirSync(dir).filter((x) => !x.startsWith('.'));
  const lastEvent = async () => {
    const row = await sqlRow<{ payload: string }>(s.server.db, "SELECT payload FROM outbox WHERE event = 'drop.received' ORDER BY id DESC");
    return row && JSON.parse(row.payload);
  };

  test('the page is a working form without its script', async () => {
    const d = await drop();
    const html = await (await fetch(`${s.url}/d/${d.token}`, { headers: { accept: 'text/html' } })).text();
    assert.match(html, /<form id="drop" method="post" enctype="multipart\/form-data"/);
    assert.match(html, /<input id="files" name="files" type="file" multiple/);
    assert.match(html, /<noscript>.*16 MB/);
  });

  test('files, uploader name and note arrive byte-exact in their submission folder; drop.received is announced', async () => {
    const d = await drop({ drop_settings: { ask_name: true } });
    const a = randomBytes(300 * 1024);
    const b = Buffer.from('second file\n');
    const r = await post(d.token, { name: 'Ayşe Y', note: 'for the report' }, [
      ['photo.bin', a],
      ['notes.txt', b],
    ]);
    assert.equal(r.status, 200, r.html);
    assert.match(r.type, /text\/html/);
    assert.match(r.html, /2 file\(s\) received/);
    assert.match(r.html, /photo\.bin/);
    const [folder] = submissions(d.dir);
    assert.match(folder, /^\d{4}-\d{2}-\d{2}_\d{6}_Ayşe_Y$/);
    assert.deepEqual(readdirSync(join(d.dir, folder)).sort(), ['NOT.txt', 'notes.txt', 'photo.bin']);
    assert.ok(readFileSync(join(d.dir, folder, 'photo.bin')).equals(a));
    assert.ok(readFileSync(join(d.dir, folder, 'notes.txt')).equals(b));
    assert.equal(readFileSync(join(d.dir, folder, 'NOT.txt'), 'utf8'), 'for the report');
    assert.deepEqual((await lastEvent()).files.sort(), ['notes.txt', 'photo.bin']);
    assert.equal((await lastEvent()).uploader, 'Ayşe_Y');
  });

  test("refusals get a styled page in the visitor's language with the right status; nothing refused is written", async () => {
    const d = await drop({ drop_settings: { allowed_ext: ['txt'], max_files: 2, max_file_size_mb: 1 } });
    const ext = await post(d.token, {}, [['run.exe', Buffer.from('MZ')]], 'tr');
    assert.equal(ext.status, 400);
    assert.match(ext.html, /<html lang="tr"/);
    assert.match(ext.html, /Gönderilemedi/);
    const big = await post(d.token, {}, [['big.txt', Buffer.alloc(MiB + 1)]]);
    assert.equal(big.status, 413, big.html);
    const three = await post(d.token, {}, [
      ['1.txt', Buffer.from('1')],
      ['2.txt', Buffer.from('2')],
      ['3.txt', Buffer.from('3')],
    ]);
    assert.equal(three.status, 400, three.html);
    assert.match(three.html, /1\.txt.*2\.txt/s, 'the page lists what arrived before the refusal');
    const files = submissions(d.dir).flatMap((f) => readdirSync(join(d.dir, f)));
    assert.deepEqual(files.sort(), ['1.txt', '2.txt'], 'no .exe, no oversize file, no third file');
    assert.deepEqual((await lastEvent()).files.sort(), ['1.txt', '2.txt'], 'what arrived is announced');
    const none = await post(d.token, {}, []);
    assert.equal(none.status, 400);
  });

  test('a file over one chunk is refused (the script sends those)', async () => {
    const d = await drop({ drop_settings: { max_file_size_mb: 100 } });
    const r = await post(d.token, {}, [['large.bin', Buffer.alloc(16 * MiB + 1)]]);
    assert.equal(r.status, 413);
    assert.deepEqual(
      submissions(d.dir).flatMap((f) => readdirSync(join(d.dir, f))),
      [],
    );
  });

  test('PIN, uploads per link and a read-only storage apply', async () => {
    const p = await drop({ pin: '2468' });
    assert.equal((await post(p.token, {}, [['a.txt', Buffer.from('a')]])).status, 401);
    const wrong = await post(p.token, { pin: '1111' }, [['a.txt', Buffer.from('a')]]);
    assert.equal(wrong.status, 401);
    assert.match(wrong.html, /Wrong PIN/);
    assert.equal((await post(p.token, { pin: '2468' }, [['a.txt', Buffer.from('a')]])).status, 200);
    assert.deepEqual(submissions(p.dir).length, 1);

    const capped = await drop({ max_uploads: 1 });
    const c = await post(capped.token, {}, [
      ['1.txt', Buffer.from('1')],
      ['2.txt', Buffer.from('2')],
    ]);
    assert.match(c.html, /1\.txt/);
    assert.equal(submissions(capped.dir).flatMap((f) => readdirSync(join(capped.dir, f))).length, 1, 'max_uploads is exact');
    const dead = await post(capped.token, {}, [['3.txt', Buffer.from('3')]]);
    assert.equal(dead.status, 404, 'a used-up link answers the dead-link page');

    const ro = await drop();
    await s.server.catalogue.repo.update(DEFAULT_TENANT, storageId, { read_only: 1 } as never);
    try {
      const r = await post(ro.token, {}, [['a.txt', Buffer.from('a')]]);
      assert.equal(r.status, 409, r.html);
      assert.deepEqual(submissions(ro.dir), []);
    } finally {
      await s.server.catalogue.repo.update(DEFAULT_TENANT, storageId, { read_only: 0 } as never);
    }
  });

  test("both chunk APIs answer the part's ETag header, as S3 UploadPart does", async () => {
    writeFileSync(join(root.dir, 'seed.txt'), 'x');
    const init = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: '/Files/etag.bin', size: 4 } });
    const c = await s.api('POST', `/api/files/upload/chunk?upload_id=${init.body.upload_id}&part=1`, {
      token: admin,
      raw: 'abcd',
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(c.status, 200);
    assert.equal(c.headers.get('etag'), `"${c.body.etag}"`);
    const d = await drop();
    const base = `/api/public/drop/${d.token}`;
    const sub = await s.api('POST', `${base}/submissions`, { body: {} });
    const f = await s.api('POST', `${base}/submissions/${sub.body.submission_id}/files`, { body: { name: 'e.txt', size: 2 } });
    const part = await s.api('PUT', `${base}/submissions/${sub.body.submission_id}/files/${f.body.upload_id}/parts/1`, {
      raw: 'ok',
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(part.status, 200, JSON.stringify(part.body));
    assert.equal(part.headers.get('etag'), `"${part.body.etag}"`);
  });

  const noBrowser = needTool('chromium', 'chromium');
  test('Chromium with JavaScript disabled sends a file byte-exact', { skip: noBrowser ?? false }, async () => {
    const d = await drop({ drop_settings: { ask_name: true } });
    const { dir, cleanup } = tempDir('filedock-dropform-ui-');
    const bytes = randomBytes(2 * MiB + 17);
    writeFileSync(join(dir, 'scan.pdf'), bytes);
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const ctx = await browser.newContext({ javaScriptEnabled: false });
      const page = await ctx.newPage();
      await page.goto(`${s.url}/d/${d.token}?lang=en`);
      assert.equal(await page.evaluate(() => 1).catch(() => 'no script'), 1, 'playwright itself still evaluates');
      await page.fill('#name', 'No Script');
      await page.fill('#note', 'sent without JavaScript');
      await page.setInputFiles('#files', join(dir, 'scan.pdf'));
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      assert.match((await page.textContent('body')) ?? '', /1 file\(s\) received/);
      const [folder] = submissions(d.dir);
      assert.match(folder, /_No_Script$/);
      assert.ok(readFileSync(join(d.dir, folder, 'scan.pdf')).equals(bytes), 'byte-exact');
      assert.equal(readFileSync(join(d.dir, folder, 'NOT.txt'), 'utf8'), 'sent without JavaScript');
      assert.ok(!existsSync(join(d.dir, folder, '.service-staging')));
    } finally {
      await browser.close();
      cleanup();
    }
  });

  // Last: it uses up this address's submissions.
  test('the per-address submission limit applies to form posts', async () => {
    const d = await drop();
    let limited = 0;
    for (let i = 0; i < 25 && !limited; i++) if ((await post(d.token, {}, [['x.txt', Buffer.from('x')]])).status === 429) limited = i;
    assert.ok(limited > 0, 'a 429 page comes after at most 20 submissions per 10 minutes');
  });
});
