/**
 * Small real documents for the full-text tests: a PDF written by hand (one
 * page, one text object, a correct cross-reference table) and office files
 * as ZIPs of minimal valid XML parts, made with the project's ZipWriter.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import { PDFDocument } from 'pdf-lib';
import { ZipWriter } from '../../server/lib/zip-writer';

/** A one-page PDF showing `lines` (ASCII) in Helvetica, one line each. */
export function pdfWith(lines: string[]): Buffer {
  const esc = (s: string) => s.replace(/[\\()]/g, (c) => '\\' + c);
  const content = `BT /F1 18 Tf 72 720 Td 22 TL ${lines.map((l) => `(${esc(l)}) Tj T*`).join(' ')} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A ZIP of the given parts (deflated), sizes declared so the central directory holds them plainly. */
export async function zipOf(parts: Record<string, string>): Promise<Buffer> {
  const out = new PassThrough();
  // Read to the stream's end: finish() resolves once the writer's side is done, which can be before the
  // last chunks reach a 'data' listener (a docx cut short ~1 time in 4 under load).
  const whole = buffer(out);
  const zip = new ZipWriter(out);
  for (const [name, text] of Object.entries(parts)) {
    const body = Buffer.from(text, 'utf8');
    await zip.addFile(name, Readable.from([body]), { size: body.length, mtime: Date.now(), compress: true });
  }
  await zip.finish();
  return whole;
}

const xml = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';

/** A .docx whose body has one paragraph per entry of `paragraphs` (XML-escaped here). */
export function docxWith(paragraphs: string[]): Promise<Buffer> {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return zipOf({
    '[Content_Types].xml': `${xml}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
    '_rels/.rels': `${xml}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    'word/document.xml': `${xml}<w:document ${W}><w:body>${paragraphs
      .map((p) => `<w:p><w:r><w:t xml:space="preserve">${esc(p)}</w:t></w:r></w:p>`)
      .join('')}<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE \\* MERGEFORMAT </w:instrText></w:r></w:p></w:body></w:document>`,
  });
}

/** An .xlsx with one sheet whose cells are the shared strings `cells` (one row). */
export function xlsxWith(cells: string[]): Promise<Buffer> {
  const M = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  return zipOf({
    '[Content_Types].xml': `${xml}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`,
    'xl/workbook.xml': `${xml}<workbook ${M}><sheets><sheet name="One" sheetId="1"/></sheets></workbook>`,
    'xl/sharedStrings.xml': `${xml}<sst ${M} count="${cells.length}">${cells.map((c) => `<si><t>${c}</t></si>`).join('')}</sst>`,
    'xl/worksheets/sheet1.xml': `${xml}<worksheet ${M}><sheetData><row r="1">${cells.map((_, i) => `<c r="${String.fromCharCode(65 + i)}1" t="s"><v>${i}</v></c>`).join('')}<c r="Z1"><v>42</v></c></row></sheetData></worksheet>`,
  });
}

/** An .odt with one paragraph per entry of `paragraphs`. */
export function odtWith(paragraphs: string[]): Promise<Buffer> {
  return zipOf({
    mimetype: 'application/vnd.oasis.opendocument.text',
    'content.xml': `${xml}<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:automatic-styles/><office:body><office:text>${paragraphs
      .map((p) => `<text:p>${p}</text:p>`)
      .join('')}</office:text></office:body></office:document-content>`,
  });
}

/**
 * The ZIP with every central-directory record's uncompressed size set to `size` (a lie: the data inflate
 * to more). Needs entries without ZIP64 sizes (zipOf declares them).
 */
export function lyingSizes(zip: Buffer, size: number): Buffer {
  const out = Buffer.from(zip);
  for (let i = out.length - 22; i >= 0; i--) {
    if (out.readUInt32LE(i) === 0x02014b50) out.writeUInt32LE(size, i + 24);
  }
  return out;
}

/** A picture of black text lines on white, as a page scanned at about 300 dpi would hold them (PNG). */
export async function scanOf(lines: string[]): Promise<Buffer> {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const h = 120 + lines.length * 90;
  const text = lines.map((l, i) => `<text x="80" y="${140 + i * 90}" font-family="DejaVu Sans" font-size="56" fill="#000">${esc(l)}</text>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="${h}"><rect width="100%" height="100%" fill="#fff"/>${text}</svg>`;
  return sharp(Buffer.from(svg)).grayscale().png().toBuffer();
}

/** A PDF of one page holding only the picture of `lines` (a scan: no text layer). */
export async function scannedPdfOf(lines: string[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const png = await doc.embedPng(await scanOf(lines));
  const page = doc.addPage([png.width * 0.24, png.height * 0.24]);
  page.drawImage(png, { x: 0, y: 0, width: page.getWidth(), height: page.getHeight() });
  return Buffer.from(await doc.save());
}

/** A .pptx with one slide whose text boxes are `paragraphs`, one paragraph each. */
export function pptxWith(paragraphs: string[]): Promise<Buffer> {
  const A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"';
  return zipOf({
    '[Content_Types].xml': `${xml}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`,
    'ppt/presentation.xml': `${xml}<p:presentation ${A}><p:sldIdLst><p:sldId id="256"/></p:sldIdLst></p:presentation>`,
    'ppt/slides/slide1.xml': `${xml}<p:sld ${A}><p:cSld><p:spTree><p:sp><p:txBody>${paragraphs
      .map((p) => `<a:p><a:r><a:t>${p}</a:t></a:r></a:p>`)
      .join('')}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`,
  });
}

/**
 * `scanOf(lines)` as a scanner would give it: every pixel shifted by up to ±`noise` grey levels and one in
 * 400 flipped to a dark or light speck (seeded, so a corpus is the same every time), 300 dpi recorded, PNG
 * or JPEG (quality 85).
 */
export async function noisyScanOf(lines: string[], seed: number, o: { format: 'png' | 'jpeg'; noise?: number }): Promise<Buffer> {
  const { data, info } = await sharp(await scanOf(lines))
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const amp = o.noise ?? 24;
  let x = seed >>> 0 || 1;
  const rand = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 4294967296);
  for (let i = 0; i < data.length; i++) {
    const r = rand();
    data[i] = r < 0.0025 ? (data[i] > 127 ? 40 : 215) : Math.max(0, Math.min(255, data[i] + Math.round((rand() * 2 - 1) * amp)));
  }
  const img = sharp(data, { raw: { width: info.width, height: info.height, channels: 1 } }).withMetadata({ density: 300 });
  return o.format === 'png' ? img.png().toBuffer() : img.jpeg({ quality: 85 }).toBuffer();
}

/**
 * The `i`-th word of a corpus: four consonant–vowel syllables (`bakodime`), distinct for every i below
 * 65⁴, neighbours unlike each other; no English word or other corpus word holds one.
 */
export function corpusWord(i: number): string {
  const C = 'bdfgkmnprstvz';
  const V = 'aeiou';
  let n = ((i + 1) * 2_654_437) % 17_850_625; // 65⁴: a multiplier prime to it spreads neighbours apart
  let w = '';
  for (let s = 0; s < 4; s++, n = Math.floor(n / 65)) w += C[Math.floor((n % 65) / 5)] + V[n % 5];
  return w;
}

export type CorpusKind = 'pdf' | 'docx' | 'xlsx' | 'pptx' | 'odt' | 'png' | 'jpeg';
export interface CorpusDoc {
  /** Path under the corpus root (`pdf/d00012.pdf`, `office/d00034.docx`, `scans/d00056.png`). */
  rel: string;
  kind: CorpusKind;
  /** The document's own words (corpusWord), found in no other document nor in any name. */
  words: string[];
}

const FILLER = 'the quarterly report lists invoices for our office and the garden supplies ordered last spring by the team while payments were late'.split(' ');
/** A line of `n` filler words starting at filler word `at`. */
const filler = (at: number, n: number) => Array.from({ length: n }, (_, k) => FILLER[(at + k * 7) % FILLER.length]).join(' ');

/**
 * Writes a corpus of `pdfs` one-page PDFs (20 lines), `office` documents (docx, xlsx, pptx, odt in turn) and
 * `scans` noisy pictures of text at 300 dpi (PNG and JPEG in turn), two known words each (one near the
 * start, one near the end), under `root`; returns what each holds. Files are numbered across the corpus.
 */
export async function writeCorpus(root: string, n: { pdfs: number; office: number; scans: number }): Promise<CorpusDoc[]> {
  const docs: CorpusDoc[] = [];
  const office: CorpusKind[] = ['docx', 'xlsx', 'pptx', 'odt'];
  const kinds: CorpusKind[] = [
    ...Array<CorpusKind>(n.pdfs).fill('pdf'),
    ...Array.from({ length: n.office }, (_, i) => office[i % 4]),
    ...Array.from({ length: n.scans }, (_, i): CorpusKind => (i % 2 ? 'jpeg' : 'png')),
  ];
  for (const d of ['pdf', 'office', 'scans']) mkdirSync(join(root, d), { recursive: true });
  for (const [i, kind] of kinds.entries()) {
    const words = [corpusWord(2 * i), corpusWord(2 * i + 1)];
    const folder = kind === 'pdf' ? 'pdf' : kind === 'png' || kind === 'jpeg' ? 'scans' : 'office';
    const rel = `${folder}/d${String(i).padStart(5, '0')}.${kind === 'jpeg' ? 'jpg' : kind}`;
    const lines = (count: number, per: number) =>
      Array.from({ length: count }, (_, l) => {
        const line = filler(i + l, per);
        return l === 1 ? `${line} ${words[0]}` : l === count - 2 ? `${words[1]} ${line}` : line;
      });
    const bytes =
      kind === 'pdf'
        ? pdfWith(lines(20, 6))
        : kind === 'docx'
          ? await docxWith(lines(20, 8))
          : kind === 'xlsx'
            ? await xlsxWith(lines(12, 4))
            : kind === 'pptx'
              ? await pptxWith(lines(12, 6))
              : kind === 'odt'
                ? await odtWith(lines(20, 8))
                : await noisyScanOf(lines(6, 5), i + 1, { format: kind });
    writeFileSync(join(root, rel), bytes);
    docs.push({ rel, kind, words });
  }
  return docs;
}

/** writeCorpus of these sizes kept in the temp dir across runs (benches): its root and what each file holds. */
export async function cachedCorpus(n: { pdfs: number; office: number; scans: number }): Promise<{ root: string; docs: CorpusDoc[] }> {
  const root = join(tmpdir(), `filedock-corpus-${n.pdfs}-${n.office}-${n.scans}`);
  const manifest = join(root, 'manifest.json');
  if (existsSync(manifest)) return { root, docs: JSON.parse(readFileSync(manifest, 'utf8')) };
  rmSync(root, { recursive: true, force: true });
  const docs = await writeCorpus(root, n);
  writeFileSync(manifest, JSON.stringify(docs));
  return { root, docs };
}
