/**
 * Legacy office files for the full-text tests: a .doc, .xls and .ppt written by LibreOffice (headless)
 * from flat ODF documents holding the given lines, so the bytes are what a real office suite writes.
 * Seconds a conversion: a suite makes them once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const NS = [
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"',
  'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"',
].join(' ');
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const flat = (kind: string, body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><office:document ${NS} office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.${kind}"><office:body>${body}</office:body></office:document>`;
const p = (s: string) => `<text:p>${esc(s)}</text:p>`;

export interface LegacyLines {
  /** Paragraphs of the .doc. */
  doc: string[];
  /** Rows of the .xls's first sheet, cells split at tabs; `sheet2` a second sheet's rows. */
  xls: string[];
  sheet2?: string[];
  /** Slides of the .ppt, one text box each. */
  ppt: string[];
}

/** The three files converted by `soffice` (must be on PATH), as bytes. */
export async function legacyDocuments(lines: LegacyLines): Promise<{ doc: Buffer; xls: Buffer; ppt: Buffer }> {
  const dir = mkdtempSync(join(tmpdir(), 'filedock-legacy-'));
  try {
    const sheet = (name: string, rows: string[]) =>
      `<table:table table:name="${name}">${rows
        .map(
          (r) =>
            `<table:table-row>${r
              .split('\t')
              .map((c) => `<table:table-cell office:value-type="string">${p(c)}</table:table-cell>`)
              .join('')}</table:table-row>`,
        )
        .join('')}</table:table>`;
    const slide = (s: string, i: number) =>
      `<draw:page draw:name="p${i}"><draw:frame svg:x="1cm" svg:y="1cm" svg:width="20cm" svg:height="5cm"><draw:text-box>${p(s)}</draw:text-box></draw:frame></draw:page>`;
    writeFileSync(join(dir, 'doc.fodt'), flat('text', `<office:text>${lines.doc.map(p).join('')}</office:text>`));
    writeFileSync(
      join(dir, 'xls.fods'),
      flat('spreadsheet', `<office:spreadsheet>${sheet('One', lines.xls)}${lines.sheet2 ? sheet('Two', lines.sheet2) : ''}</office:spreadsheet>`),
    );
    writeFileSync(join(dir, 'ppt.fodp'), flat('presentation', `<office:presentation>${lines.ppt.map(slide).join('')}</office:presentation>`));
    const out: Record<string, Buffer> = {};
    for (const [format, input] of [
      ['doc', 'doc.fodt'],
      ['xls', 'xls.fods'],
      ['ppt', 'ppt.fodp'],
    ]) {
      await promisify(execFile)(
        'soffice',
        [
          `-env:UserInstallation=file://${join(dir, 'profile')}`,
          '--headless',
          '--norestore',
          '--convert-to',
          format,
          '--outdir',
          join(dir, 'out'),
          join(dir, input),
        ],
        { env: { ...process.env, HOME: dir }, timeout: 120_000 },
      );
      out[format] = readFileSync(join(dir, 'out', `${format}.${format}`));
    }
    return { doc: out.doc, xls: out.xls, ppt: out.ppt };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A hand-written RTF document with these paragraphs (ASCII, or \uN escapes for the rest). */
export function rtfWith(paragraphs: string[]): Buffer {
  const enc = (s: string) => [...s].map((c) => (c.charCodeAt(0) < 128 ? c.replace(/[\\{}]/g, '\\$&') : `\\u${c.charCodeAt(0)}?`)).join('');
  return Buffer.from(`{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Times New Roman;}}\\f0\\fs24 ${paragraphs.map((x) => `${enc(x)}\\par `).join('')}}`, 'latin1');
}
