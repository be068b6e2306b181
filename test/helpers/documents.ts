/**
 * Small real documents for the full-text tests: a PDF written by hand (one
 * page, one text object, a correct cross-reference table) and office files
 * as ZIPs of minimal valid XML parts, made with the project's ZipWriter.
 */
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
