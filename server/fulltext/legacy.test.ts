import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { needTool, tempDir } from '../../test/helpers/tools';
import { legacyDocuments, rtfWith } from '../../test/helpers/legacy-documents';
import { extractText, textFormatOf, wantsText, type FileSource } from './extract';
import { ExtractError } from './errors';

const missing = needTool('catdoc', 'catdoc') ?? needTool('soffice', 'libreoffice-impress-nogui');

/** A file held in memory, read by ranges (no local path: copied to the work folder first). */
const inMemory = (name: string, bytes: Buffer): FileSource => ({
  name,
  size: bytes.length,
  mime: null,
  localFile: async () => null,
  read: async (r) => Readable.from([bytes.subarray(r.start, r.end + 1)]),
});

let dir: string;
let cleanup: () => void;
let files: Awaited<ReturnType<typeof legacyDocuments>>;
before(async () => {
  ({ dir, cleanup } = tempDir('filedock-legacy-test-'));
  if (!missing)
    files = await legacyDocuments({
      doc: ['Quokka memorandum for the board', 'Şubat raporu café'],
      xls: ['Quarter\tWallaby revenue', 'North\tAğustos'],
      sheet2: ['Second sheet dingo'],
      ppt: ['Platypus roadmap slide', 'Çarşamba review'],
    });
});
after(() => cleanup?.());

const run = (src: FileSource) => extractText(src, new AbortController().signal, dir);
/** The same bytes as a file on a local disk, read by its path. */
const onDisk = (name: string, bytes: Buffer): FileSource => {
  const file = join(dir, name);
  writeFileSync(file, bytes);
  return { ...inMemory(name, bytes), localFile: async () => file };
};

test('legacy formats by extension and MIME type', () => {
  assert.deepEqual(
    ['a.DOC', 'a.rtf', 'a.xls', 'a.ppt', 'a.pps', 'mail.eml'].map((n) => textFormatOf(n, null)),
    ['doc', 'doc', 'xls', 'ppt', 'ppt', 'eml'],
  );
  assert.deepEqual(
    ['application/msword', 'text/rtf', 'application/vnd.ms-excel', 'application/vnd.ms-powerpoint', 'message/rfc822'].map((m) => textFormatOf('noext', m)),
    ['doc', 'doc', 'xls', 'ppt', 'eml'],
  );
  assert.equal(wantsText('mail/a.eml', 10, null), true);
});

test('doc, xls and rtf through catdoc: words and non-ASCII letters, every sheet, from a local file and from a copy', { skip: missing ?? false }, async () => {
  const doc = await run(onDisk('memo.doc', files.doc));
  assert.equal(doc.text, 'Quokka memorandum for the board\nŞubat raporu café');
  assert.equal(doc.capped, false);
  assert.deepEqual(await run(inMemory('memo.doc', files.doc)), doc, 'a remote file is copied and read the same');
  const xls = await run(inMemory('sheet.xls', files.xls));
  assert.equal(xls.text, 'Quarter Wallaby revenue\nNorth Ağustos\nSecond sheet dingo');
  const rtf = await run(inMemory('letter.rtf', rtfWith(['Dingo report', 'Şubat taslağı'])));
  assert.equal(rtf.text, 'Dingo report\nŞubat taslağı');
});

test('ppt through LibreOffice: the text of every slide', { skip: missing ?? false }, async () => {
  const ppt = await run(inMemory('deck.ppt', files.ppt));
  assert.match(ppt.text, /Platypus roadmap slide/);
  assert.match(ppt.text, /Çarşamba review/);
});

test('not a legacy file: garbage named .doc, .xls or .ppt fails with a reason before any tool runs; a broken one with the tool’s', {
  skip: missing ?? false,
}, async () => {
  const garbage = Buffer.from('this is not an OLE compound file, just words named like a document');
  for (const name of ['fake.doc', 'fake.xls', 'fake.ppt'])
    await assert.rejects(
      run(inMemory(name, garbage)),
      (e: Error) => e instanceof ExtractError && !e.skip && /no (OLE or RTF|OLE) signature/.test(e.message),
      name,
    );
  const cut = files.doc.subarray(0, 3000);
  await assert.rejects(run(inMemory('cut.doc', cut)), (e: Error) => e instanceof ExtractError && /catdoc/.test(e.message) && /Broken OLE/i.test(e.message));
  await assert.rejects(
    run(inMemory('cut.xls', files.xls.subarray(0, 3000))),
    (e: Error) => e instanceof ExtractError && /xls2csv: .*not OLE file/.test(e.message),
  );
  // A Word file named .ppt: LibreOffice opens it but has no presentation to write.
  await assert.rejects(run(inMemory('word.ppt', files.doc)), /could not read it as a presentation/);
});
