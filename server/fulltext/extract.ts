/**
 * Which files have text worth indexing, and getting it: one call per file,
 * bounded in time (EXTRACT_TIMEOUT_MS), in what it reads and in what it
 * returns (TEXT_CAP characters). Failures are ExtractError with a reason.
 *
 * | format | how | bounds |
 * |---|---|---|
 * | PDF | `pdftotext` child process (pdf.ts) | MAX_PAGES, output, memory, time; a remote file is copied first, up to MAX_PDF_BYTES |
 * | docx/xlsx/pptx, odt/ods/odp | XML parts by ranged reads (office.ts) | part size, ratio, inflated bytes |
 * | doc/xls/ppt (97–2003), rtf | catdoc, xls2csv; LibreOffice to odp for ppt (legacy.ts) | output, memory, time; a remote file is copied first, up to MAX_LEGACY_BYTES |
 * | EML | a bounded MIME reader (eml.ts) | MAX_EML_BYTES, parts, depth |
 * | HTML | tags stripped, scripts and styles dropped | the first MAX_MARKUP_BYTES |
 * | Markdown, CSV, plain text, other text/* | as is | the first MAX_TEXT_BYTES |
 * | pictures, PDFs without a text layer (OCR on) | Tesseract, pages rendered by pdftoppm (ocr.ts) | OCR_MAX_PAGES, memory, OCR_TIMEOUT_MS |
 * | photos' EXIF/IPTC/XMP, audio and video tags (as metadata, not text) | sharp's header read, ffprobe (media-meta.ts) | META_CAP, header or head and tail only |
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { isText } from '../catalogue';
import { extOf, isInternalPath } from '../lib/paths';
import { ExtractError } from './errors';
import { HTML_RULES, MarkupText, TextSink } from './markup';
import { officeText, type OfficeFormat } from './office';
import { legacyText, type LegacyFormat } from './legacy';
import { emlText } from './eml';
import { pdfText } from './pdf';
import { MEDIA_EXTS, mediaMeta, PHOTO_EXTS } from './media-meta';
import { OCR_BELOW_CHARS, OCR_IMAGE_EXTS, ocrImage, ocrPdf } from './ocr';

export type TextFormat = 'pdf' | OfficeFormat | LegacyFormat | 'eml' | 'html' | 'text' | 'image' | 'media';

/**
 * Characters of text stored per file at most (`search_fts.body`); the rest of a longer document is not
 * searchable. Bounded by what one write of the body costs: SQLite indexes it inside the unit, on the
 * event loop (measured on a loaded 2-core machine: 256 Ki characters ~40 ms, 1 Mi ~200 ms).
 */
export const TEXT_CAP = 256 * 1024;
/** One file's extraction at most, whatever the format. */
export const EXTRACT_TIMEOUT_MS = 60_000;
/** One file's extraction at most when it is read by OCR (a scanned PDF: up to 20 pages at 300 dpi). */
export const OCR_TIMEOUT_MS = 10 * 60_000;
/** A PDF on a storage with no local path is copied to the work folder first: up to this size. */
export const MAX_PDF_BYTES = 512 * 1024 * 1024;
/** A legacy office file on a storage with no local path is copied first: up to this size. */
export const MAX_LEGACY_BYTES = 128 * 1024 * 1024;
/** Plain text: the first bytes read; PDF: what pdftotext may write (TEXT_CAP characters are at most 4 bytes each). */
export const MAX_TEXT_BYTES = 4 * TEXT_CAP;
/** HTML: the first bytes read (tags make up much of it). */
export const MAX_MARKUP_BYTES = 16 * 1024 * 1024;

const EXTS: Record<string, TextFormat> = {};
const add = (f: TextFormat, list: string) => list.split(' ').forEach((e) => (EXTS[e] = f));
add('pdf', 'pdf');
add('docx', 'docx docm dotx dotm');
add('xlsx', 'xlsx xlsm xltx xltm');
add('pptx', 'pptx pptm ppsx ppsm potx');
add('odf', 'odt ods odp ott ots otp');
add('doc', 'doc dot rtf');
add('xls', 'xls xlt');
add('ppt', 'ppt pps pot');
add('eml', 'eml');
add('html', 'html htm xhtml');
add('text', 'txt text md markdown csv tsv log');
add('image', OCR_IMAGE_EXTS.join(' '));
add('media', MEDIA_EXTS.join(' '));

const MIMES: Record<string, TextFormat> = {
  'application/msword': 'doc',
  'application/rtf': 'doc',
  'text/rtf': 'doc',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.ms-powerpoint': 'ppt',
  'message/rfc822': 'eml',
};

/** The format a file's text is read as, or null when it has none worth indexing. By extension first, then MIME type. */
export function textFormatOf(name: string, mime: string | null): TextFormat | null {
  const byExt = EXTS[extOf(name)];
  if (byExt) return byExt;
  const m = (mime ?? '').toLowerCase().split(';')[0].trim();
  if (m === 'application/pdf') return 'pdf';
  if (MIMES[m]) return MIMES[m];
  if (m === 'text/html' || m === 'application/xhtml+xml') return 'html';
  return isText(m) ? 'text' : null;
}

/**
 * Whether a file is queued for extraction: a non-empty file of a known format outside the service folders.
 * (No storage area is encrypted today; an encrypted one must answer false here: its text never leaves it.)
 */
export function wantsText(path: string, size: number, mime: string | null, ocr = false): boolean {
  if (size === 0 || isInternalPath(path)) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  const format = textFormatOf(name, mime);
  // A picture without metadata has text only for OCR, on the storages where it is on.
  return format !== null && (format !== 'image' || ocr || PHOTO_EXTS.includes(extOf(name)));
}

/** Where a file's bytes come from (the file service's storage operations for one place). */
export interface FileSource {
  name: string;
  size: number;
  mime: string | null;
  /** The file's real path on a local disk, or null. */
  localFile(): Promise<string | null>;
  read(range: { start: number; end: number }, signal?: AbortSignal): Promise<Readable>;
}

export interface Extracted {
  text: string;
  /** Cut at TEXT_CAP or at a reading bound. */
  capped: boolean;
  /** A photo's, a song's or a video's metadata as text (media-meta.ts), and its date taken (epoch ms). */
  meta?: string;
  taken?: number | null;
}

/**
 * The text of one file. `signal` is the job's (shutdown, cancel): its abort propagates as is, so the file
 * stays waiting; running past EXTRACT_TIMEOUT_MS (OCR_TIMEOUT_MS when read by OCR) is a failure. `workDir`
 * holds copies of remote PDFs and pictures and rendered pages. `ocrLangs`: the storage's OCR is on, in these
 * Tesseract languages (null: off).
 */
export async function extractText(src: FileSource, signal: AbortSignal, workDir: string, ocrLangs: string | null = null): Promise<Extracted> {
  const format = textFormatOf(src.name, src.mime);
  if (!format) throw new ExtractError('not a format whose text is indexed');
  const ms = ocrLangs && (format === 'image' || format === 'pdf') ? OCR_TIMEOUT_MS : EXTRACT_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(ms);
  const both = AbortSignal.any([signal, timeout]);
  try {
    return await byFormat(format, src, both, workDir, ocrLangs);
  } catch (e) {
    if (signal.aborted) throw signal.reason ?? e;
    if (timeout.aborted) throw new ExtractError(`extraction took longer than ${ms / 1000} s`);
    throw ExtractError.from(e, 'extraction failed');
  }
}

async function byFormat(format: TextFormat, src: FileSource, signal: AbortSignal, workDir: string, ocrLangs: string | null): Promise<Extracted> {
  const sink = new TextSink(TEXT_CAP);
  if (format === 'image' || format === 'media') {
    const ocr = format === 'image' ? ocrLangs : null;
    const meta = await mediaMeta(format, src, signal, workDir, !!ocr);
    if (ocr) sink.add(await withLocalCopy(src, signal, workDir, (file) => ocrImage(file, ocr, signal)));
    return { text: sink.text(), capped: sink.capped, meta: meta.text, taken: meta.taken };
  }
  if (format === 'pdf') {
    return withLocalCopy(src, signal, workDir, async (file) => {
      const r = await pdfText(file, signal, MAX_TEXT_BYTES);
      // No text layer to speak of: a scan, read by OCR where it is on.
      if (ocrLangs && r.text.trim().length < OCR_BELOW_CHARS) {
        await ocrPdf(file, ocrLangs, signal, workDir, sink);
        return { text: sink.text(), capped: sink.capped };
      }
      sink.add(r.text);
      return { text: sink.text(), capped: r.capped || sink.capped };
    });
  }
  if (format === 'doc' || format === 'xls' || format === 'ppt') {
    const capped = await withLocalCopy(src, signal, workDir, (file) => legacyText(format, file, signal, workDir, sink), MAX_LEGACY_BYTES);
    return { text: sink.text(), capped: capped || sink.capped };
  }
  if (format === 'eml') {
    const capped = await emlText(src, signal, sink);
    return { text: sink.text(), capped: capped || sink.capped };
  }
  if (format === 'html' || format === 'text') {
    const max = format === 'html' ? MAX_MARKUP_BYTES : MAX_TEXT_BYTES;
    const end = Math.min(src.size, max);
    const markup = format === 'html' ? new MarkupText(HTML_RULES, sink) : null;
    const feed = (s: string) => (markup ? markup.push(s) : sink.add(s));
    const decoder = new StringDecoder('utf8');
    let first = true;
    for await (const chunk of await src.read({ start: 0, end: end - 1 }, signal)) {
      const buf = chunk as Buffer;
      if (first && buf.subarray(0, 8192).includes(0)) throw new ExtractError('binary content (a NUL byte near the start)', { skip: true });
      let s = decoder.write(buf);
      if (first) s = s.replace(/^\uFEFF/, '');
      first = false;
      feed(s);
      if (sink.full) break;
    }
    feed(decoder.end());
    return { text: sink.text(), capped: sink.capped || src.size > max };
  }
  await officeText(format, { size: src.size, read: (span, s) => src.read(span, s ?? signal) }, sink, signal);
  return { text: sink.text(), capped: sink.capped };
}

/** Runs `use` on a local path of the file: its own on a local disk, else a copy in `workDir` of at most `max` bytes. */
async function withLocalCopy<T>(src: FileSource, signal: AbortSignal, workDir: string, use: (file: string) => Promise<T>, max = MAX_PDF_BYTES): Promise<T> {
  const local = await src.localFile();
  if (local) return use(local);
  if (src.size > max) throw new ExtractError(`too large to copy for extraction (${src.size} bytes, limit ${max})`, { skip: true });
  const dir = await mkdtemp(join(workDir, 'text-'));
  try {
    const file = join(dir, 'input');
    await pipeline(await src.read({ start: 0, end: src.size - 1 }, signal), createWriteStream(file), { signal });
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
