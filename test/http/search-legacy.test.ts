/**
 * Search inside legacy office files and e-mail (issue 34), end to end on a real server: a .doc, .xls and
 * .ppt written by LibreOffice and read back by catdoc, xls2csv and LibreOffice, and a hand-written .eml,
 * uploaded through the HTTP API, extracted in the background, then found by a word of their text with a
 * snippet. Runs on SQLite and, in the PostgreSQL phase, on PostgreSQL (scripts/test-phases.mjs).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { extractedRow } from '../helpers/extracted';
import { needTool, tempDir } from '../helpers/tools';
import { legacyDocuments } from '../helpers/legacy-documents';
import { TextExtractsRepo } from '../../server/catalogue';
import { SNIPPET_MARK_END as END, SNIPPET_MARK_START as START } from '../../server/files/snippet';
import { DEFAULT_TENANT } from '../../server/db';

describe('search inside legacy office files and e-mail', () => {
  let s: TestServer;
  let admin: string;
  let cleanup: () => void;
  let texts: TextExtractsRepo;
  let storageId = 0;

  before(async () => {
    for (const [bin, pkg] of [
      ['catdoc', 'catdoc'],
      ['soffice', 'libreoffice-impress-nogui'],
    ]) {
      const missing = needTool(bin, pkg);
      if (missing) throw new Error(missing);
    }
    let root: string;
    ({ dir: root, cleanup } = tempDir('filedock-legacy-search-'));
    s = await startTestServer();
    admin = await s.login();
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

  const upload = async (name: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('path', '/Docs');
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
    assert.equal(r.status, 200, await r.text());
  };
  const search = async (q: string) => {
    const r = await s.api('GET', `/api/files/search?q=${encodeURIComponent(q)}`, { token: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.entries.map((e: any) => [e.path, e.match, e.snippet]);
  };
  /** The file's extraction row once it left `pending` (LibreOffice takes seconds a presentation on a loaded machine). */
  const extracted = (rel: string, ms = 120_000) => extractedRow(s, texts, storageId, rel, ms);

  test('a word inside a .doc, .xls, .ppt and .eml is found by content with a snippet; garbage named .doc fails with a reason', async () => {
    const files = await legacyDocuments({
      doc: ['Minutes of the board', 'the quokka budget was approved'],
      xls: ['Region\tRevenue', 'North\twallaby sales'],
      ppt: ['Roadmap', 'platypus launch in spring'],
    });
    const eml = [
      'From: =?utf-8?Q?G=C3=BCl?= <gul@example.org>',
      'To: team@example.org',
      'Subject: =?utf-8?B?S2VzdHJlbCBvcmRlcg==?=',
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'The numbat invoice is attached, caf=C3=A9 included.',
      '--b',
      'Content-Type: application/pdf; name=bilby-terms.pdf',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('%PDF-1.4 dingo is only inside the attachment').toString('base64'),
      '--b--',
      '',
    ].join('\r\n');
    await upload('minutes.doc', files.doc);
    await upload('sales.xls', files.xls);
    await upload('roadmap.ppt', files.ppt);
    await upload('order.eml', Buffer.from(eml));
    await upload('fake.doc', Buffer.from('plain words wearing a Word name'));
    for (const f of ['minutes.doc', 'sales.xls', 'roadmap.ppt', 'order.eml']) {
      const row = await extracted(f);
      assert.equal(row.state, 'done', `${f}: ${JSON.stringify(row)}`);
    }
    const fake = await extracted('fake.doc');
    assert.deepEqual([fake.state, /no OLE or RTF signature/.test(fake.reason ?? '')], ['failed', true], JSON.stringify(fake));

    assert.deepEqual(await search('quokka'), [['/Docs/minutes.doc', 'content', `Minutes of the board the ${START}quokka${END} budget was approved`]]);
    assert.deepEqual(await search('"wallaby sales"'), [['/Docs/sales.xls', 'content', `Region Revenue North ${START}wallaby sales${END}`]]);
    const ppt = await search('platypus');
    assert.deepEqual(
      ppt.map((e: unknown[]) => e.slice(0, 2)),
      [['/Docs/roadmap.ppt', 'content']],
    );
    assert.ok(ppt[0][2].includes(`${START}platypus${END} launch in spring`), ppt[0][2]);
    // The e-mail by a word of its body, of its encoded subject and of its attachment's name; not by the attachment's body.
    const mail = await search('numbat');
    assert.deepEqual(
      mail.map((e: unknown[]) => e.slice(0, 2)),
      [['/Docs/order.eml', 'content']],
    );
    assert.ok(mail[0][2].includes(`The ${START}numbat${END} invoice is attached, café included.`), mail[0][2]);
    for (const q of ['kestrel order', 'Gül', 'bilby-terms'])
      assert.deepEqual(
        (await search(q)).map((e: unknown[]) => e[0]),
        ['/Docs/order.eml'],
        q,
      );
    assert.deepEqual(await search('dingo'), [], 'an attachment body is not indexed');
    assert.deepEqual(await search('wearing'), [], 'a failed extraction stores no text');
    assert.equal((await s.api('GET', '/api/capabilities')).status, 200, 'still serving');
  });
});
