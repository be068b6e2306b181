/**
 * The searchable metadata of a photo, parsed from the raw EXIF, IPTC and XMP blocks sharp hands over (its
 * header read only, no pixels decoded): camera, lens, date taken, place names and what people typed (title,
 * description, keywords, author). Every parser is bounded by its input (a block over MAX_BLOCK is left out,
 * an IFD holds at most MAX_ENTRIES entries, offsets are checked), and a broken block gives what it could.
 */

/** A metadata block larger than this is not read (a JPEG's APP segment holds 64 KiB; a TIFF may hold more). */
export const MAX_BLOCK = 1024 * 1024;
/** Entries of one EXIF directory read at most. */
const MAX_ENTRIES = 512;
/** Characters kept of one value. */
const MAX_VALUE = 2000;

/** What the blocks say: values to index, and the date taken (epoch ms) when one is recorded. */
export interface PhotoFacts {
  values: string[];
  taken: number | null;
}

/** EXIF tags kept as text (IFD0 and the Exif directory). */
const EXIF_TEXT: Record<number, true> = {
  0x010e: true, // ImageDescription
  0x010f: true, // Make
  0x0110: true, // Model
  0x013b: true, // Artist
  0x8298: true, // Copyright
  0xa433: true, // LensMake
  0xa434: true, // LensModel
};
/** Windows' XP tags: UCS-2 little-endian in BYTE arrays (title, comment, author, keywords, subject). */
const EXIF_XP: Record<number, true> = { 0x9c9b: true, 0x9c9c: true, 0x9c9d: true, 0x9c9e: true, 0x9c9f: true };
const EXIF_IFD = 0x8769;
const DATE_ORIGINAL = 0x9003;
const OFFSET_ORIGINAL = 0x9011;
const USER_COMMENT = 0x9286;
/** Bytes per unit of each TIFF type (1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL, 7 UNDEFINED, …). */
const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8 };

const clean = (s: string) =>
  s
    .slice(0, 4 * MAX_VALUE)
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_VALUE);

/** EXIF "YYYY:MM:DD HH:MM:SS" (the camera's clock; `offset` "+03:00" when recorded, else read as UTC). */
export function exifDate(s: string, offset?: string): number | null {
  const m = /^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(s.trim());
  if (!m || m[1] === '0000') return null;
  const t = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${offset && /^[+-]\d{2}:\d{2}$/.test(offset) ? offset : 'Z'}`);
  return Number.isNaN(t) ? null : t;
}

/** A date in an ISO 8601 form (XMP); a date without a zone is read as UTC. */
function isoDate(s: string): number | null {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$/.exec(s.trim());
  if (!m) return null;
  const zone = m[7] ? (m[7] === 'Z' ? 'Z' : m[7].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')) : 'Z';
  const t = Date.parse(`${m[1]}-${m[2] ?? '01'}-${m[3] ?? '01'}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${zone}`);
  return Number.isNaN(t) ? null : t;
}

/** The EXIF block (sharp's `exif`: "Exif\0\0" then a TIFF header) as text values and the date taken. */
export function parseExif(block: Buffer | undefined): PhotoFacts {
  const out: PhotoFacts = { values: [], taken: null };
  if (!block || block.length > MAX_BLOCK) return out;
  const b = block.subarray(0, 6).toString('latin1') === 'Exif\0\0' ? block.subarray(6) : block;
  if (b.length < 8) return out;
  const le = b.toString('latin1', 0, 2) === 'II';
  if (!le && b.toString('latin1', 0, 2) !== 'MM') return out;
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  let original: string | undefined;
  let offset: string | undefined;
  /** One directory's entries: its text tags into `out`, the Exif directory's offset when it points to one. */
  const directory = (at: number, onTag: (tag: number, bytes: Buffer, type: number) => void) => {
    if (at < 8 || at + 2 > b.length) return;
    const n = Math.min(u16(at), MAX_ENTRIES);
    for (let i = 0; i < n; i++) {
      const e = at + 2 + i * 12;
      if (e + 12 > b.length) return;
      const tag = u16(e);
      const type = u16(e + 2);
      const size = (TYPE_SIZE[type] ?? 0) * u32(e + 4);
      if (size === 0 || size > MAX_BLOCK) continue;
      const start = size <= 4 ? e + 8 : u32(e + 8);
      if (start + size > b.length) continue;
      onTag(tag, b.subarray(start, start + size), type);
    }
  };
  const ascii = (bytes: Buffer) => clean(bytes.toString('utf8').replace(/\0.*$/s, ''));
  let exifAt = 0;
  const text = (tag: number, bytes: Buffer, type: number) => {
    if (tag === EXIF_IFD && (type === 4 || type === 13) && bytes.length >= 4) exifAt = le ? bytes.readUInt32LE(0) : bytes.readUInt32BE(0);
    else if (EXIF_TEXT[tag] && type === 2) out.values.push(ascii(bytes));
    else if (EXIF_XP[tag]) out.values.push(clean(bytes.toString('utf16le').replace(/\0.*$/s, '')));
    else if (tag === DATE_ORIGINAL && type === 2) original = ascii(bytes);
    else if (tag === OFFSET_ORIGINAL && type === 2) offset = ascii(bytes);
    else if (tag === USER_COMMENT && bytes.length > 8) {
      const code = bytes.toString('latin1', 0, 8);
      const body = bytes.subarray(8);
      out.values.push(clean(code.startsWith('UNICODE') ? body.toString(le ? 'utf16le' : 'latin1').replace(/\0.*$/s, '') : ascii(body)));
    }
  };
  directory(u32(4), text);
  if (exifAt && exifAt !== u32(4)) directory(exifAt, text);
  out.values = out.values.filter(Boolean);
  if (original) out.taken = exifDate(original, offset);
  return out;
}

/** IPTC-IIM datasets of record 2 kept as text: title, keywords, places, caption, headline, author. */
const IPTC_TEXT: Record<number, true> = { 5: true, 25: true, 80: true, 90: true, 92: true, 95: true, 101: true, 105: true, 120: true };
const IPTC_DATE = 55;

/**
 * The IPTC block (sharp's `iptc`: Photoshop resources holding IIM datasets, or the datasets alone): text
 * values and the date created. Datasets are read in sequence from the first record-2 marker; UTF-8 when the
 * bytes are valid UTF-8, else Latin-1.
 */
export function parseIptc(block: Buffer | undefined): PhotoFacts {
  const out: PhotoFacts = { values: [], taken: null };
  if (!block || block.length > MAX_BLOCK) return out;
  let i = block.indexOf(Buffer.from([0x1c, 0x02]));
  while (i >= 0 && i + 5 <= block.length && block[i] === 0x1c) {
    const record = block[i + 1];
    const dataset = block[i + 2];
    const len = block.readUInt16BE(i + 3);
    // The extended form (a length of more than 32 KiB) is not used by text datasets: stop there.
    if (len & 0x8000) break;
    const value = block.subarray(i + 5, Math.min(block.length, i + 5 + len));
    if (record === 2 && IPTC_TEXT[dataset]) out.values.push(clean(decode(value)));
    if (record === 2 && dataset === IPTC_DATE && /^\d{8}$/.test(value.toString('latin1')))
      out.taken ??= isoDate(value.toString('latin1').replace(/^(\d{4})(\d{2})(\d{2})$/, '$1-$2-$3'));
    i += 5 + len;
  }
  out.values = out.values.filter(Boolean);
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function decode(b: Buffer): string {
  try {
    return utf8.decode(b);
  } catch {
    return b.toString('latin1');
  }
}

/** XMP properties kept as text: Dublin Core, Photoshop's and IPTC Core's places and captions, lens names. */
const XMP_TEXT = [
  'dc:title',
  'dc:description',
  'dc:subject',
  'dc:creator',
  'photoshop:Headline',
  'photoshop:City',
  'photoshop:State',
  'photoshop:Country',
  'Iptc4xmpCore:Location',
  'Iptc4xmpCore:CountryCode',
  'Iptc4xmpExt:City',
  'Iptc4xmpExt:Sublocation',
  'Iptc4xmpExt:ProvinceState',
  'Iptc4xmpExt:CountryName',
  'aux:Lens',
  'exifEX:LensModel',
  'lr:hierarchicalSubject',
];
const XMP_DATES = ['exif:DateTimeOriginal', 'photoshop:DateCreated', 'xmp:CreateDate'];
const XMP_WANTED = new Set([...XMP_TEXT, ...XMP_DATES]);
/** Characters of an XMP packet read at most (the regular expressions run over it). */
const MAX_XMP = 128 * 1024;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const unescapeXml = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, e: string) => {
    if (e[0] !== '#') return ENTITIES[e] ?? all;
    const cp = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
    return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : all;
  });

/**
 * The wanted properties' values in one pass over the packet (linear: no pattern looks past the next `<`, so
 * a crafted packet costs what its length does): the attribute form (`photoshop:City="…"`) and every text
 * inside the element form, each `rdf:li` of a list on its own.
 */
function xmpValues(x: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const push = (name: string, v: string) => {
    const c = clean(unescapeXml(v));
    if (!c) return;
    const list = out.get(name);
    if (list) list.push(c);
    else out.set(name, [c]);
  };
  let open: string | null = null;
  let depth = 0;
  for (const m of x.matchAll(/<([/?!]?)([^\s>/<]*)([^<>]*)>|([^<]+)/g)) {
    if (m[4] !== undefined) {
      if (open) push(open, m[4]);
      continue;
    }
    const [, kind, name, rest] = m;
    if (kind === '?' || kind === '!') continue;
    if (kind === '/') {
      if (open && depth-- === 0) open = null;
      continue;
    }
    for (const a of rest.matchAll(/([\w.-]+:[\w.-]+)\s*=\s*"([^"]*)"/g)) if (XMP_WANTED.has(a[1])) push(a[1], a[2]);
    if (rest.endsWith('/')) continue;
    if (open) depth++;
    else if (XMP_WANTED.has(name)) (open = name), (depth = 0);
  }
  return out;
}

/** The XMP packet (sharp's `xmp`, UTF-8 XML): text values and the date taken. */
export function parseXmp(block: Buffer | undefined): PhotoFacts {
  if (!block || block.length > MAX_BLOCK) return { values: [], taken: null };
  const x = block.toString('utf8', 0, Math.min(block.length, MAX_XMP * 4)).slice(0, MAX_XMP);
  const found = xmpValues(x);
  let taken: number | null = null;
  for (const d of XMP_DATES) taken ??= (found.get(d) ?? []).map(isoDate).find((t) => t !== null) ?? null;
  return { values: XMP_TEXT.flatMap((p) => found.get(p) ?? []), taken };
}
