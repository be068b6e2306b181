import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { needTool, tempDir } from '../../test/helpers/tools';
import { docxWith, lyingSizes, odtWith, pdfWith, scannedPdfOf, scanOf, xlsxWith, zipOf } from '../../test/helpers/documents';
import { extractText, textFormatOf, wantsText, TEXT_CAP, type FileSource } from './extract';
import { ExtractError } from './errors';
import { HTML_RULES, MarkupText, TextSink } from './markup';

/** A file held in memory, read by ranges as a remote storage would be (no local path). */
const inMemory = (name: string, bytes: Buffer): FileSource => ({
  name,
  size: bytes.length,
  mime: null,
  localFile: async () => null,
  read: async (r) => Readable.from([bytes.subarray(r.start, r.end + 1)]),
});

const run = (src: FileSource, dir = '/tmp') => extractText(src, new AbortController().signal, dir);

test('formats by extension, then MIME type; service folders and empty files are not wanted', () => {
  assert.equal(textFormatOf('a.PDF', null), 'pdf');
  assert.equal(textFormatOf('a.docx', null), 'docx');
  assert.equal(textFormatOf('a.ods', null), 'odf');
  assert.equal(textFormatOf('page', 'text/html; charset=utf-8'), 'html');
  assert.equal(textFormatOf('notes', 'text/plain'), 'text');
  assert.equal(textFormatOf('photo.jpg', 'image/jpeg'), 'image');
  assert.equal(textFormatOf('clip.mp4', null), 'media');
  // Audio and video by extension only: `.ts` sources are `video/mp2t` to MIME tables.
  assert.equal(textFormatOf('main.ts', 'video/mp2t'), null);
  assert.equal(textFormatOf('data.bin', 'application/octet-stream'), null);
  // A photo is wanted for its metadata; a picture format without any (BMP) only where OCR is on.
  assert.deepEqual([wantsText('scan.bmp', 10, null), wantsText('scan.bmp', 10, null, true)], [false, true]);
  assert.deepEqual([wantsText('a/photo.JPG', 10, null), wantsText('song.mp3', 10, null)], [true, true]);
  assert.equal(wantsText('docs/a.pdf', 10, null), true);
  assert.equal(wantsText('.service-trash/x/a.pdf', 10, null), false);
  assert.equal(wantsText('docs/a.pdf', 0, null), false);
});

test('markup: tags out, breaks and cells as blanks, entities decoded, across any chunk boundary', () => {
  const html =
    '<html><head><title>T&amp;C</title><style>p{color:red}</style></head><body><p>caf&eacute; &#x4E2D;&#25991; &lt;ok&gt;</p><script>var x="<p>no</p>";</script><table><tr><td>a</td><td>b</td></tr></table><!-- <p>hidden</p> --></body></html>';
  for (const size of [1, 3, 7, html.length]) {
    const sink = new TextSink(1000);
    const m = new MarkupText(HTML_RULES, sink);
    for (let i = 0; i < html.length; i += size) m.push(html.slice(i, i + size));
    assert.equal(sink.text(), 'T&C\ncafé 中文 <ok>\na b', `chunks of ${size}`);
  }
  const capped = new TextSink(5);
  capped.add('abcdefgh');
  assert.equal(capped.text(), 'abcde');
  assert.ok(capped.capped);
});

test('office documents: the text of docx, xlsx and odt, read by ranges; field codes and cell indexes left out', async () => {
  const docx = await run(inMemory('a.docx', await docxWith(['First wombat paragraph', 'Second & last'])));
  assert.equal(docx.text, 'First wombat paragraph\nSecond & last');
  assert.equal(docx.capped, false);
  const xlsx = await run(inMemory('a.xlsx', await xlsxWith(['Quarter', 'Numbat revenue'])));
  assert.match(xlsx.text, /Quarter/);
  assert.match(xlsx.text, /Numbat revenue/);
  assert.doesNotMatch(xlsx.text, /\b42\b/);
  const odt = await run(inMemory('a.odt', await odtWith(['Bilby notes', 'Şubat raporu'])));
  assert.equal(odt.text, 'Bilby notes\nŞubat raporu');
});

test('bad office input fails with a reason: lying sizes, not a ZIP, no text part', async () => {
  const lying = lyingSizes(await docxWith(['a paragraph long enough to inflate past the lie']), 10);
  await assert.rejects(run(inMemory('bad.docx', lying)), (e: Error) => e instanceof ExtractError && /size_mismatch/.test(e.message));
  await assert.rejects(run(inMemory('bad.docx', Buffer.from('not a zip at all'))), (e: Error) => e instanceof ExtractError && /ZIP|archive/i.test(e.message));
  await assert.rejects(run(inMemory('empty.docx', await zipOf({ 'other.txt': 'x' }))), /no text part/);
  // A bomb: 64 MiB of one letter inflated from a few hundred KiB.
  const bomb = await zipOf({ 'word/document.xml': 'a'.repeat(64 * 1024 * 1024) });
  assert.ok(bomb.length < (64 * 1024 * 1024) / 200, `the bomb is ${bomb.length} bytes`);
  await assert.rejects(run(inMemory('bomb.docx', bomb)), /compressed more than 200:1/);
});

test('plain text: the first bytes up to the cap, capped beyond it; binary content is skipped', async () => {
  const big = Buffer.from('word '.repeat(TEXT_CAP / 2));
  const r = await run(inMemory('big.txt', big));
  assert.equal(r.capped, true);
  assert.equal(r.text.length <= TEXT_CAP, true);
  assert.ok(r.text.startsWith('word word'));
  const md = await run(inMemory('readme.md', Buffer.from('\uFEFF# Title\n\nSome *echidna* text')));
  assert.equal(md.text, '# Title\nSome *echidna* text');
  await assert.rejects(run(inMemory('blob.txt', Buffer.from([0x41, 0, 0x42]))), (e: Error) => e instanceof ExtractError && e.skip);
});

test('PDF through pdftotext: a local file and a remote one (copied), and a PDF that is not one', async (t) => {
  const skip = needTool('pdftotext', 'poppler-utils');
  if (skip) return t.skip(skip);
  const d = tempDir();
  try {
    const pdf = pdfWith(['Hello platypus world', 'second (line)']);
    const file = join(d.dir, 'a.pdf');
    writeFileSync(file, pdf);
    const local = await run({ ...inMemory('a.pdf', pdf), localFile: async () => file });
    assert.match(local.text, /Hello platypus world\nsecond \(line\)/);
    const remote = await run(inMemory('a.pdf', pdf), d.dir);
    assert.equal(remote.text, local.text);
    await assert.rejects(
      run(inMemory('fake.pdf', Buffer.from('just some text, no PDF here')), d.dir),
      (e: Error) => e instanceof ExtractError && /pdftotext/.test(e.message),
    );
  } finally {
    d.cleanup();
  }
});

test('OCR: a picture and a PDF without a text layer are read by Tesseract where OCR is on; empty where off', async (t) => {
  const skip = needTool('tesseract', 'tesseract-ocr') ?? needTool('pdftoppm', 'poppler-utils');
  if (skip) return t.skip(skip);
  const d = tempDir();
  const ocr = (src: FileSource, langs: string | null) => extractText(src, new AbortController().signal, d.dir, langs);
  try {
    const png = await scanOf(['The quokka receipt', 'paid on 3 March 2026']);
    const read = await ocr(inMemory('receipt.png', png), 'eng');
    assert.match(read.text, /quokka receipt/);
    assert.match(read.text, /3 March 2026/);
    assert.equal((await ocr(inMemory('receipt.png', png), null)).text, '', 'OCR off: the metadata only');

    const pdf = await scannedPdfOf(['Letter from the echidna club', 'membership renewal']);
    assert.equal((await ocr(inMemory('letter.pdf', pdf), null)).text.trim(), '', 'no text layer, OCR off: nothing');
    assert.match((await ocr(inMemory('letter.pdf', pdf), 'eng')).text, /echidna club/);
    // A PDF with a text layer keeps it: no OCR.
    assert.match((await ocr(inMemory('a.pdf', pdfWith(['Hello platypus world and more words to pass the bound'])), 'eng')).text, /platypus/);
    // Not a picture, bad languages: a failure with a reason.
    await assert.rejects(
      ocr(inMemory('fake.png', Buffer.from('not a picture at all')), 'eng'),
      (e: Error) => e instanceof ExtractError && /tesseract/.test(e.message),
    );
    await assert.rejects(ocr(inMemory('receipt.png', png), 'eng; rm -rf /'), (e: Error) => e instanceof ExtractError && /SERVICE_OCR_LANGS/.test(e.message));
  } finally {
    d.cleanup();
  }
});
