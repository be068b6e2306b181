/**
 * Search inside documents (issue 34, first slice), end to end on a real server: real PDFs read back by
 * poppler's pdftotext, office files built with the project's ZipWriter, uploaded through the HTTP API or
 * found by the sync, extracted in the background, then searched. Runs on SQLite and, in the PostgreSQL
 * phase, on PostgreSQL (scripts/test-phases.mjs).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { extractedRow } from '../helpers/extracted';
import { needTool, tempDir } from '../helpers/tools';
import { docxWith, lyingSizes, odtWith, pdfWith, scannedPdfOf, scanOf, xlsxWith } from '../helpers/documents';
import { TextExtractsRepo } from '../../server/catalogue';
import { SNIPPET_MARK_END as END, SNIPPET_MARK_START as START } from '../../server/files/snippet';
import { TEXT_CAP } from '../../server/fulltext';
import { sqlRows, sqlValue } from '../helpers/sql';
import { DEFAULT_TENANT } from '../../server/db';

describe('search inside documents', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;
  let texts: TextExtractsRepo;
  let storageId = 0;

  before(async () => {
    const missing = needTool('pdftotext', 'poppler-utils');
    if (missing) throw new Error(missing);
    ({ dir: root, cleanup } = tempDir('filedock-fulltext-'));
    s = await startTestServer();
    admin = await s.login();
    // Polling, not watched: a watcher's folder check between a rename on disk and the gate's move of the row
    // would catalogue the new name as a new file (a race of the catalogue's, not of extraction).
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root }, sync_mode: 'poll' },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    storageId = s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Docs')!.id;
    texts = new TextExtractsRepo(s.server.db);
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  const upload = async (name: string, bytes: Buffer, folder = '/Docs') => {
    const form = new FormData();
    form.append('path', folder);
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
    assert.equal(r.status, 200, await r.text());
  };
  const search = (q: string) => s.api('GET', `/api/files/search?q=${encodeURIComponent(q)}`, { token: admin });
  const names = async (q: string) => (await search(q)).body.entries.map((e: any) => e.name);
  const nodeId = async (rel: string) => (await s.server.catalogue.nodes.get({ id: storageId, tenant_id: 1 }, rel))!.id;
  /** The file's extraction row once it left `pending` for its current version (15 s; 60 s when read by OCR). */
  const extracted = (rel: string, storage = storageId, ms = 15_000) => extractedRow(s, texts, storage, rel, ms);

  test('a word inside a PDF, a docx, an xlsx and an odt is found by content, with a snippet; a name by name', async () => {
    await upload('report.pdf', pdfWith(['Quarterly figures', 'the platypus invoice is due']));
    await upload('memo.docx', await docxWith(['Dear team,', 'the wombat meeting moves to Friday.']));
    await upload('sheet.xlsx', await xlsxWith(['Region', 'numbat sales']));
    await upload('notes.odt', await odtWith(['Bilby sightings', 'Şubat raporu']));
    for (const f of ['report.pdf', 'memo.docx', 'sheet.xlsx', 'notes.odt']) assert.equal((await extracted(f)).state, 'done', f);

    const pdf = await search('platypus');
    assert.equal(pdf.status, 200, JSON.stringify(pdf.body));
    assert.deepEqual(
      pdf.body.entries.map((e: any) => [e.path, e.match]),
      [['/Docs/report.pdf', 'content']],
    );
    assert.equal(pdf.body.entries[0].snippet, `Quarterly figures the ${START}platypus${END} invoice is due`);
    assert.equal(pdf.body.total, 1);
    const docx = (await search('"WOMBAT MEETING"')).body.entries;
    assert.deepEqual(
      docx.map((e: any) => [e.name, e.match]),
      [['memo.docx', 'content']],
    );
    assert.match(docx[0].snippet, new RegExp(`${START}wombat meeting${END} moves to Friday`));
    assert.deepEqual(await names('numbat'), ['sheet.xlsx']);
    assert.deepEqual(await names('bilby'), ['notes.odt']);
    assert.deepEqual(await names('MERGEFORMAT'), [], 'field codes are not text');

    const byName = (await search('report')).body.entries;
    assert.deepEqual(
      byName.map((e: any) => [e.name, e.match, e.snippet]),
      [['report.pdf', 'name', undefined]],
    );
    const filtered = (await s.api('GET', '/api/files/search?ext=pdf', { token: admin })).body.entries;
    assert.deepEqual(
      filtered.map((e: any) => [e.name, e.match]),
      [['report.pdf', 'metadata']],
    );
  });

  test('rename: still found under the new name, not extracted again; overwrite: the old word gone, the new found; delete: gone', async () => {
    await extracted('memo.docx');
    const id = await nodeId('memo.docx');
    const before = await texts.byId(DEFAULT_TENANT, id);
    const count = s.server.services.textIndex.extracted;
    const mv = await s.api('POST', '/api/files/rename', { token: admin, body: { path: '/Docs/memo.docx', new_name: 'minutes.docx' } });
    assert.equal(mv.status, 200, JSON.stringify(mv.body));
    const moved = (await search('wombat')).body.entries;
    assert.deepEqual(
      moved.map((e: any) => [e.path, e.match]),
      [['/Docs/minutes.docx', 'content']],
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(s.server.services.textIndex.extracted, count, 'no extraction after a rename');
    assert.deepEqual(await texts.byId(DEFAULT_TENANT, id), before);

    await upload('minutes.docx', await docxWith(['The kangaroo agenda replaces it all.']));
    const redone = await extracted('minutes.docx');
    assert.equal(redone.state, 'done', JSON.stringify(redone));
    assert.equal(await nodeId('minutes.docx'), id, 'the same node');
    assert.deepEqual(await names('wombat'), []);
    assert.deepEqual(await names('kangaroo'), ['minutes.docx']);

    const del = await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/minutes.docx'] } });
    assert.deepEqual(del.body.deleted, ['/Docs/minutes.docx']);
    assert.deepEqual(await names('kangaroo'), []);
    assert.equal(await texts.byId(DEFAULT_TENANT, id), undefined);
  });

  test('a document written straight to the disk is extracted after the sync finds it', async () => {
    writeFileSync(join(root, 'scanned.pdf'), pdfWith(['An echidna was seen near the river']));
    assert.equal((await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Docs' } })).status, 200);
    assert.equal((await extracted('scanned.pdf')).state, 'done');
    assert.deepEqual(await names('echidna'), ['scanned.pdf']);
  });

  test('bad input: a corrupt docx and a PDF that is not one fail with a reason, a huge text is capped; the service lives on', async () => {
    await upload('corrupt.docx', lyingSizes(await docxWith(['enough words here to inflate well past the lie'.repeat(20)]), 10));
    await upload('fake.pdf', Buffer.from('this is plain text wearing a PDF name'));
    const head = 'koala '.repeat(10);
    const huge = Buffer.alloc(6 * 1024 * 1024, 'lorem ipsum dolor sit amet ');
    huge.write(head, 0);
    huge.write('dingo', huge.length - 10);
    await upload('huge.txt', huge);

    const corrupt = await extracted('corrupt.docx');
    assert.deepEqual([corrupt.state, /size_mismatch/.test(corrupt.reason ?? '')], ['failed', true], JSON.stringify(corrupt));
    const fake = await extracted('fake.pdf');
    assert.deepEqual([fake.state, /pdftotext/.test(fake.reason ?? '')], ['failed', true], JSON.stringify(fake));
    const big = await extracted('huge.txt');
    assert.deepEqual([big.state, big.capped, big.chars <= TEXT_CAP], ['done', 1, true], JSON.stringify(big));
    assert.match(big.reason ?? '', /first/);
    assert.deepEqual(await names('koala'), ['huge.txt']);
    assert.deepEqual(await names('dingo'), [], 'past the cap: not indexed');
    assert.deepEqual(await names('wearing a PDF'), [], 'a failed extraction stores no text');
    assert.equal((await s.api('GET', '/api/capabilities')).status, 200, 'still serving');

    // Admin → Status: the storage's counts, its failures newest first with their reasons.
    const st = await s.api('GET', '/api/admin/status', { token: admin });
    assert.equal(st.status, 200);
    assert.equal(st.body.text_index.enabled, true);
    const docs = st.body.text_index.storages.find((x: any) => x.name === 'Docs');
    const rows = await sqlRows<{ state: string; n: number }>(s.server.db, 'SELECT state, count(*) AS n FROM text_extracts GROUP BY state');
    for (const state of ['done', 'failed', 'pending', 'skipped'])
      assert.equal(docs[state], Number(rows.find((r) => r.state === state)?.n ?? 0), `${state} counted`);
    // Both failed in the same drain, two at a time: either may be the newer.
    assert.deepEqual(docs.failures.map((f: any) => f.path).sort(), ['corrupt.docx', 'fake.pdf']);
    assert.ok(docs.failures[0].at >= docs.failures[1].at, 'newest first');
    assert.match(docs.failures.find((f: any) => f.path === 'corrupt.docx').reason, /size_mismatch/);
  });

  test('words must all be found (name or text), a "phrase" as typed, a -word or -"phrase" excludes; bad queries are 400', async () => {
    await upload('invoice-march.pdf', pdfWith(['Kestrel Supplies Ltd', 'total due in fourteen days']));
    await upload('invoice-april.docx', await docxWith(['Osprey Traders', 'total due at once']));
    await upload('letter.docx', await docxWith(['Kestrel Supplies wrote again', 'nothing is due']));
    for (const f of ['invoice-march.pdf', 'invoice-april.docx', 'letter.docx']) assert.equal((await extracted(f)).state, 'done', f);

    // Each word anywhere: one in the name, the other in the text.
    const both = await search('invoice kestrel');
    assert.deepEqual(
      both.body.entries.map((e: any) => [e.name, e.match]),
      [['invoice-march.pdf', 'content']],
    );
    assert.ok(both.body.entries[0].snippet.includes(`${START}Kestrel${END}`), both.body.entries[0].snippet);
    // Words of the text each marked where the snippet shows them.
    assert.equal((await search('kestrel ltd')).body.entries[0].snippet, `${START}Kestrel${END} Supplies ${START}Ltd${END} total due in fourteen days`);
    // A word found only in names is a name match.
    assert.deepEqual(
      (await search('invoice march')).body.entries.map((e: any) => [e.name, e.match]),
      [['invoice-march.pdf', 'name']],
    );
    // A phrase keeps its words together and in order; the same words apart do not match it.
    assert.deepEqual(await names('"total due in"'), ['invoice-march.pdf']);
    assert.deepEqual(await names('"due total"'), []);
    assert.deepEqual((await names('total due')).sort(), ['invoice-april.docx', 'invoice-march.pdf']);
    // Exclusions: a word of the text, a word of the name, a phrase, a short word (names only).
    assert.deepEqual(await names('kestrel -fourteen'), ['letter.docx']);
    assert.deepEqual(await names('kestrel -invoice'), ['letter.docx']);
    assert.deepEqual(await names('total -"at once"'), ['invoice-march.pdf']);
    assert.deepEqual((await names('supplies -ap')).sort(), ['invoice-march.pdf', 'letter.docx']);
    assert.deepEqual(await names('supplies -in'), ['letter.docx']);
    // Exclusions alone narrow nothing; more than 16 terms is too many.
    for (const q of ['-kestrel', '-"total due"']) assert.deepEqual([(await search(q)).status, (await search(q)).body.error], [400, 'validation_failed'], q);
    const many = await search(Array.from({ length: 17 }, (_, i) => `word${i}`).join(' '));
    assert.deepEqual([many.status, many.body.error], [400, 'validation_failed']);
    assert.deepEqual((await search(Array.from({ length: 16 }, (_, i) => `word${i}`).join(' '))).status, 200);
  });

  test('OCR: off by default; turned on for a storage, its scans already there are read, and new ones as they come', async () => {
    const missing = needTool('tesseract', 'tesseract-ocr');
    if (missing) throw new Error(missing);
    const scans = tempDir('filedock-scans-');
    try {
      const add = await s.api('POST', '/api/admin/storages', {
        token: admin,
        body: { rbac_enabled: false, name: 'Scans', driver: 'local', config: { path: scans.dir }, sync_mode: 'poll' },
      });
      assert.deepEqual([add.status, add.body.ocr], [200, false], JSON.stringify(add.body));
      const id = add.body.id;
      await upload('receipt.png', await scanOf(['The quokka receipt', 'paid on 3 March 2026']), '/Scans');
      await upload('letter.pdf', await scannedPdfOf(['Letter from the echidna club', 'membership renewal']), '/Scans');
      const letter = await extracted('letter.pdf', id);
      assert.deepEqual([letter.state, letter.chars < 32], ['done', true], 'no text layer, OCR off: (almost) nothing');
      const meta = await extracted('receipt.png', id);
      assert.deepEqual([meta.state, meta.chars], ['done', 0], 'OCR off: a picture is read for its metadata only');
      assert.deepEqual(await names('quokka'), []);

      const on = await s.api('PATCH', `/api/admin/storages/${id}`, { token: admin, body: { ocr: true } });
      assert.deepEqual([on.status, on.body.ocr], [200, true], JSON.stringify(on.body));
      assert.equal((await extracted('receipt.png', id, 60_000)).state, 'done');
      assert.equal((await extracted('letter.pdf', id, 60_000)).state, 'done');
      const receipt = (await search('quokka receipt')).body.entries;
      assert.deepEqual(
        receipt.map((e: any) => [e.path, e.match]),
        [['/Scans/receipt.png', 'content']],
      );
      assert.ok(receipt[0].snippet.includes(`${START}quokka${END} ${START}receipt${END}`), receipt[0].snippet);
      assert.deepEqual(await names('echidna club'), ['letter.pdf']);
      // A scan written later is read as it comes.
      await upload('note.jpg', await scanOf(['A wallaby left this note']), '/Scans');
      assert.equal((await extracted('note.jpg', id, 60_000)).state, 'done');
      assert.deepEqual(await names('wallaby'), ['note.jpg']);
    } finally {
      scans.cleanup();
    }
  });

  test('files waiting when the server stops are extracted after a restart, even with no op left for them', async () => {
    const data = tempDir('filedock-fulltext-restart-');
    const store = tempDir('filedock-fulltext-store-');
    try {
      const a = await startTestServer({ SERVICE_DATA_DIR: data.dir });
      let id = 0;
      try {
        const token = await a.login();
        const st = await a.api('POST', '/api/admin/storages', {
          token,
          body: { rbac_enabled: false, name: 'Later', driver: 'local', config: { path: store.dir } },
        });
        assert.equal(st.status, 200, JSON.stringify(st.body));
        a.server.pause(true);
        const form = new FormData();
        form.append('path', '/Later');
        form.append('file', new Blob([new Uint8Array(pdfWith(['a tapir crossed the road']))]), 'tapir.pdf');
        assert.equal((await fetch(`${a.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } })).status, 200);
        id = (await a.server.catalogue.nodes.get(a.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Later')!, 'tapir.pdf'))!.id;
        assert.equal((await new TextExtractsRepo(a.server.db).byId(DEFAULT_TENANT, id))?.state, 'pending');
        // A crash between the hook's commit and the op's: the op is gone, the row still waits.
        assert.equal(await sqlValue(a.server.db, "SELECT count(*) FROM ops WHERE kind = 'text.extract' AND status = 'queued'"), 1);
        await sqlRows(a.server.db, "DELETE FROM ops WHERE kind = 'text.extract'");
      } finally {
        await a.close();
      }
      const b = await startTestServer({ SERVICE_DATA_DIR: data.dir });
      try {
        const repo = new TextExtractsRepo(b.server.db);
        const until = Date.now() + 15_000;
        while ((await repo.byId(DEFAULT_TENANT, id))?.state !== 'done') {
          assert.ok(Date.now() < until, 'extracted after the restart');
          await new Promise((r) => setTimeout(r, 50));
        }
        const found = await b.api('GET', '/api/files/search?q=crossed%20the', { token: await b.login() });
        assert.deepEqual(
          found.body.entries.map((e: any) => [e.path, e.match]),
          [['/Later/tapir.pdf', 'content']],
        );
      } finally {
        await b.close();
      }
    } finally {
      data.cleanup();
      store.cleanup();
    }
  });
});
