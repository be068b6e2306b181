/**
 * New documents built inside the service (spec: Document editor integration,
 * rule 5): minimal valid OOXML (docx, xlsx, pptx) and ODF (odt, ods, odp)
 * packages, an empty draw.io diagram, and empty text files. The ZIP packages
 * are written with the streaming ZIP writer into memory once and cached; an
 * ODF package stores `mimetype` first and uncompressed, as ODF requires.
 * `NewDocuments` is the file service's new-document port: the office types
 * are offered only while the document server is configured, `drawio` only
 * with a diagram editor.
 */
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { NewdocType } from '../contract';
import type { NewdocPort } from '../files';
import { ZipWriter } from '../lib/zip-writer';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const CT = 'http://schemas.openxmlformats.org/package/2006/content-types';
const OD = 'application/vnd.openxmlformats-officedocument';

const types = (overrides: Record<string, string>) =>
  `${XML}<Types xmlns="${CT}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
  Object.entries(overrides)
    .map(([part, ct]) => `<Override PartName="${part}" ContentType="${ct}"/>`)
    .join('') +
  '</Types>';
const rels = (list: Array<[string, string, string]>) =>
  `${XML}<Relationships xmlns="${PKG_REL}">` +
  list.map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`).join('') +
  '</Relationships>';

const DOCX: Record<string, string> = {
  '[Content_Types].xml': types({ '/word/document.xml': `${OD}.wordprocessingml.document.main+xml` }),
  '_rels/.rels': rels([['rId1', 'officeDocument', 'word/document.xml']]),
  'word/document.xml': `${XML}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p/><w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`,
};

const XLSX: Record<string, string> = {
  '[Content_Types].xml': types({ '/xl/workbook.xml': `${OD}.spreadsheetml.sheet.main+xml`, '/xl/worksheets/sheet1.xml': `${OD}.spreadsheetml.worksheet+xml` }),
  '_rels/.rels': rels([['rId1', 'officeDocument', 'xl/workbook.xml']]),
  'xl/workbook.xml': `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${REL}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  'xl/_rels/workbook.xml.rels': rels([['rId1', 'worksheet', 'worksheets/sheet1.xml']]),
  'xl/worksheets/sheet1.xml': `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData/></worksheet>`,
};

const A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"';
const P = `xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" ${A} xmlns:r="${REL}"`;
const emptyTree = '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/></p:spTree></p:cSld>';
const fill = (c: string) => `<a:solidFill><a:schemeClr val="${c}"/></a:solidFill>`;
const line = `<a:ln w="9525">${fill('phClr')}</a:ln>`;
const THEME =
  `${XML}<a:theme ${A} name="Office"><a:themeElements><a:clrScheme name="Office">` +
  '<a:dk1><a:srgbClr val="000000"/></a:dk1><a:lt1><a:srgbClr val="FFFFFF"/></a:lt1><a:dk2><a:srgbClr val="44546A"/></a:dk2><a:lt2><a:srgbClr val="E7E6E6"/></a:lt2>' +
  '<a:accent1><a:srgbClr val="4472C4"/></a:accent1><a:accent2><a:srgbClr val="ED7D31"/></a:accent2><a:accent3><a:srgbClr val="A5A5A5"/></a:accent3>' +
  '<a:accent4><a:srgbClr val="FFC000"/></a:accent4><a:accent5><a:srgbClr val="5B9BD5"/></a:accent5><a:accent6><a:srgbClr val="70AD47"/></a:accent6>' +
  '<a:hlink><a:srgbClr val="0563C1"/></a:hlink><a:folHlink><a:srgbClr val="954F72"/></a:folHlink></a:clrScheme>' +
  '<a:fontScheme name="Office"><a:majorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont><a:minorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>' +
  `<a:fmtScheme name="Office"><a:fillStyleLst>${fill('phClr').repeat(3)}</a:fillStyleLst><a:lnStyleLst>${line.repeat(3)}</a:lnStyleLst>` +
  `<a:effectStyleLst>${'<a:effectStyle><a:effectLst/></a:effectStyle>'.repeat(3)}</a:effectStyleLst><a:bgFillStyleLst>${fill('phClr').repeat(3)}</a:bgFillStyleLst></a:fmtScheme>` +
  '</a:themeElements></a:theme>';

const PPTX: Record<string, string> = {
  '[Content_Types].xml': types({
    '/ppt/presentation.xml': `${OD}.presentationml.presentation.main+xml`,
    '/ppt/slideMasters/slideMaster1.xml': `${OD}.presentationml.slideMaster+xml`,
    '/ppt/slideLayouts/slideLayout1.xml': `${OD}.presentationml.slideLayout+xml`,
    '/ppt/slides/slide1.xml': `${OD}.presentationml.slide+xml`,
    '/ppt/theme/theme1.xml': `${OD}.theme+xml`,
  }),
  '_rels/.rels': rels([['rId1', 'officeDocument', 'ppt/presentation.xml']]),
  'ppt/presentation.xml':
    `${XML}<p:presentation ${P}><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst>` +
    '<p:sldSz cx="12192000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>',
  'ppt/_rels/presentation.xml.rels': rels([
    ['rId1', 'slideMaster', 'slideMasters/slideMaster1.xml'],
    ['rId2', 'slide', 'slides/slide1.xml'],
    ['rId3', 'theme', 'theme/theme1.xml'],
  ]),
  'ppt/slideMasters/slideMaster1.xml':
    `${XML}<p:sldMaster ${P}>${emptyTree}<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>` +
    '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>',
  'ppt/slideMasters/_rels/slideMaster1.xml.rels': rels([
    ['rId1', 'slideLayout', '../slideLayouts/slideLayout1.xml'],
    ['rId2', 'theme', '../theme/theme1.xml'],
  ]),
  'ppt/slideLayouts/slideLayout1.xml': `${XML}<p:sldLayout ${P} type="blank" preserve="1">${emptyTree}<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>`,
  'ppt/slideLayouts/_rels/slideLayout1.xml.rels': rels([['rId1', 'slideMaster', '../slideMasters/slideMaster1.xml']]),
  'ppt/slides/slide1.xml': `${XML}<p:sld ${P}>${emptyTree}<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>`,
  'ppt/slides/_rels/slide1.xml.rels': rels([['rId1', 'slideLayout', '../slideLayouts/slideLayout1.xml']]),
  'ppt/theme/theme1.xml': THEME,
};

const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" ' +
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" office:version="1.2"';
const odfMime = (kind: string) => `application/vnd.oasis.opendocument.${kind}`;
const odf = (kind: string, body: string, styles = ''): Record<string, string> => ({
  mimetype: odfMime(kind),
  'META-INF/manifest.xml':
    `${XML}<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">` +
    `<manifest:file-entry manifest:full-path="/" manifest:version="1.2" manifest:media-type="${odfMime(kind)}"/>` +
    '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>' +
    '<manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/></manifest:manifest>',
  'content.xml': `${XML}<office:document-content ${ODF_NS}><office:body>${body}</office:body></office:document-content>`,
  'styles.xml': `${XML}<office:document-styles ${ODF_NS}>${styles}</office:document-styles>`,
});

const ODT = odf('text', '<office:text><text:p/></office:text>');
const ODS = odf(
  'spreadsheet',
  '<office:spreadsheet><table:table table:name="Sheet1"><table:table-column/><table:table-row><table:table-cell/></table:table-row></table:table></office:spreadsheet>',
);
const ODP = odf(
  'presentation',
  '<office:presentation><draw:page draw:name="page1" draw:master-page-name="Default"/></office:presentation>',
  '<office:master-styles><style:master-page style:name="Default"/></office:master-styles>',
);

const DRAWIO =
  '<mxfile host="filedock"><diagram id="page-1" name="Page-1"><mxGraphModel dx="800" dy="600" grid="1" gridSize="10" page="1" pageWidth="827" pageHeight="1169">' +
  '<root><mxCell id="0"/><mxCell id="1" parent="0"/></root></mxGraphModel></diagram></mxfile>\n';

const PACKAGES: Record<string, Record<string, string>> = { docx: DOCX, xlsx: XLSX, pptx: PPTX, odt: ODT, ods: ODS, odp: ODP };

/** Every type the service can create (spec: `newdoc_types`), in menu order. */
export const ALL_NEWDOC_TYPES: readonly NewdocType[] = [
  { ext: 'docx', group: 'word', mime: `${OD}.wordprocessingml.document`, requires: 'docserver' },
  { ext: 'xlsx', group: 'cell', mime: `${OD}.spreadsheetml.sheet`, requires: 'docserver' },
  { ext: 'pptx', group: 'slide', mime: `${OD}.presentationml.presentation`, requires: 'docserver' },
  { ext: 'odt', group: 'word', mime: odfMime('text'), requires: 'docserver' },
  { ext: 'ods', group: 'cell', mime: odfMime('spreadsheet'), requires: 'docserver' },
  { ext: 'odp', group: 'slide', mime: odfMime('presentation'), requires: 'docserver' },
  { ext: 'txt', group: 'text', mime: 'text/plain', requires: '' },
  { ext: 'md', group: 'text', mime: 'text/markdown', requires: '' },
  { ext: 'drawio', group: 'diagram', mime: 'application/vnd.jgraph.mxfile', requires: 'diagram' },
];

/** A ZIP package in memory; the first entry is stored (ODF's `mimetype`), the rest deflated. */
async function zipPackage(entries: Record<string, string>, firstStored: boolean): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  const collected = pipeline(out, async function* (src: AsyncIterable<Buffer>) {
    for await (const c of src) chunks.push(c);
  });
  const zip = new ZipWriter(out, { level: 6 });
  const mtime = new Date('2026-01-01T00:00:00Z');
  let i = 0;
  for (const [name, text] of Object.entries(entries)) {
    const bytes = Buffer.from(text, 'utf8');
    await zip.addFile(name, Readable.from([bytes]), { size: bytes.length, mtime, compress: !(firstStored && i++ === 0) });
  }
  await zip.finish();
  await collected;
  return Buffer.concat(chunks);
}

/** The bytes of a new, empty document of type `ext`. */
export async function buildTemplate(ext: string): Promise<Buffer> {
  const pkg = PACKAGES[ext];
  if (pkg) return zipPackage(pkg, ext.startsWith('od'));
  if (ext === 'drawio') return Buffer.from(DRAWIO, 'utf8');
  if (ext === 'txt' || ext === 'md') return Buffer.alloc(0);
  throw new Error(`no template for ${ext}`);
}

export class NewDocuments implements NewdocPort {
  private cache = new Map<string, Promise<Buffer>>();

  constructor(private available: { docserver: () => boolean; diagram: () => boolean }) {}

  types(): NewdocType[] {
    return ALL_NEWDOC_TYPES.filter((t) => t.requires === '' || this.available[t.requires]());
  }

  template(ext: string): Promise<Buffer> {
    let p = this.cache.get(ext);
    if (!p) {
      p = buildTemplate(ext);
      this.cache.set(ext, p);
      p.catch(() => this.cache.delete(ext));
    }
    return p;
  }
}
