// Over 60 s in CI (test-timings.json; issue 37): LibreOffice converts office documents to PDF, once per version.
/**
 * The read-only office preview: `GET /api/files/pdf?path=` converts an office
 * document with LibreOffice headless once per etag (cached), serves it with
 * validators and ranges, makes a new rendition when the file changes, and
 * refuses what is not an office document (415) or not readable.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTemplate } from '../../server/docserver';
import { startTestServer, type TestServer } from '../helpers/server';
import { hasTool, tempDir } from '../helpers/tools';

describe('docserver: PDF rendition of office documents (no document server)', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-pdf-'));
    writeFileSync(join(root, 'report.docx'), await buildTemplate('docx'));
    writeFileSync(join(root, 'sheet.ods'), await buildTemplate('ods'));
    writeFileSync(join(root, 'notes.txt'), 'plain text');
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Docs', driver: 'local', config: { path: root }, sync_mode: 'poll' } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  });
  after(async () => {
    await s?.close();
    cleanup();
  });

  const pdf = (path: string, headers: Record<string, string> = {}, token = admin) =>
    fetch(`${s.url}/api/files/pdf?path=${encodeURIComponent(path)}`, { headers: { authorization: `Bearer ${token}`, ...headers } });

  test('an office document is converted once per etag, served with validators and ranges', async (t) => {
    if (!hasTool('soffice')) {
      if (process.env.CI) assert.fail('[CI] soffice not found: install libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui');
      return t.skip('soffice not found: install libreoffice-writer-nogui');
    }
    const t0 = performance.now();
    const r = await pdf('/Docs/report.docx');
    const first = performance.now() - t0;
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get('content-type'), 'application/pdf');
    assert.match(r.headers.get('content-disposition') ?? '', /inline; filename="report\.pdf"/);
    const body = Buffer.from(await r.arrayBuffer());
    assert.equal(body.subarray(0, 5).toString(), '%PDF-');
    const etag = r.headers.get('etag')!;
    assert.match(etag, /^"pdf-/);

    const t1 = performance.now();
    const again = await pdf('/Docs/report.docx');
    const cached = performance.now() - t1;
    assert.ok(Buffer.from(await again.arrayBuffer()).equals(body), 'the cached rendition is served again');
    console.log(`# PDF rendition: first ${first.toFixed(0)} ms (LibreOffice), cached ${cached.toFixed(1)} ms`);
    assert.ok(cached < first / 3, `cached ${cached} ms vs first ${first} ms`);
    assert.equal(readdirSync(join(s.dataDir, 'cache', 'pdf')).filter((n) => n.endsWith('.pdf')).length, 1);
    assert.ok(!readdirSync(join(s.dataDir, 'cache', 'pdf')).some((n) => n.startsWith('.work-')), 'work folders removed');

    assert.equal((await pdf('/Docs/report.docx', { 'if-none-match': etag })).status, 304);
    const part = await pdf('/Docs/report.docx', { range: 'bytes=0-4' });
    assert.equal(part.status, 206);
    assert.equal(await part.text(), '%PDF-');

    // A spreadsheet converts too (another LibreOffice component).
    const ods = await pdf('/Docs/sheet.ods');
    assert.equal(ods.status, 200);
    assert.equal(
      Buffer.from(await ods.arrayBuffer())
        .subarray(0, 5)
        .toString(),
      '%PDF-',
    );

    // New bytes (another document, re-read by a refresh): a new rendition with another etag.
    writeFileSync(join(root, 'report.docx'), await buildTemplate('odt'));
    assert.equal((await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Docs' } })).status, 200);
    const changed = await pdf('/Docs/report.docx');
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), etag);
    await changed.arrayBuffer();
  });

  test('not an office document: 415 in the envelope; a missing file: 404; signed out: 401', async () => {
    const r = await pdf('/Docs/notes.txt');
    assert.equal(r.status, 415);
    const b = await r.json();
    assert.equal(b.error, 'unsupported_media_type');
    assert.ok(b.message);
    assert.equal((await pdf('/Docs/none.docx')).status, 404);
    assert.equal((await fetch(`${s.url}/api/files/pdf?path=/Docs/report.docx`)).status, 401);
  });

  test("the named form /api/files/pdf/<name>.pdf?path= serves the same rendition under the file's own name (issue 39 item 18)", async (t) => {
    if (!hasTool('soffice')) {
      if (process.env.CI) assert.fail('[CI] soffice not found: install libreoffice-writer-nogui');
      return t.skip('soffice not found: install libreoffice-writer-nogui');
    }
    writeFileSync(join(root, 'Ağustos raporu.docx'), await buildTemplate('docx'));
    assert.equal((await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Docs' } })).status, 200);
    const url = `${s.url}/api/files/pdf/${encodeURIComponent('Ağustos raporu.pdf')}?path=${encodeURIComponent('/Docs/Ağustos raporu.docx')}`;
    const r = await fetch(url, { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get('content-type'), 'application/pdf');
    assert.match(r.headers.get('content-disposition') ?? '', /^inline; .*filename\*=UTF-8''A%C4%9Fustos%20raporu\.pdf$/);
    assert.equal(
      Buffer.from(await r.arrayBuffer())
        .subarray(0, 5)
        .toString(),
      '%PDF-',
    );
    // The segment is cosmetic: the path decides what is served and what may be read.
    const other = await fetch(`${s.url}/api/files/pdf/x.pdf?path=${encodeURIComponent('/Docs/notes.txt')}`, { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(other.status, 415);
    assert.equal((await fetch(url)).status, 401);
  });
});
