/**
 * OCR of scans for search (docs/fulltext.md, "OCR"): Tesseract reads a picture, or each page of a PDF
 * without a text layer rendered by poppler's `pdftoppm`. Both are child processes at low priority
 * (lib/run-tool.ts) under `prlimit --as` where it exists, so a picture of 50,000 × 50,000 pixels ends in a
 * failure with a reason, never in the service. Only for storages whose OCR an admin turned on.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ExtractError } from './errors';
import { runBounded } from './tools';
import type { TextSink } from './markup';

/** Pictures read by OCR (by extension). */
export const OCR_IMAGE_EXTS = ['png', 'jpg', 'jpeg', 'tif', 'tiff', 'bmp', 'webp'];
/** A PDF whose text layer holds fewer characters than this is read as a scan. */
export const OCR_BELOW_CHARS = 32;
/** Pages of a scanned PDF read at most (the first ones). */
export const OCR_MAX_PAGES = 20;
/** Rendering resolution of a scanned page: Tesseract's best range (300 dpi). */
const DPI = 300;
/** Text one page or picture may give (the stored text is capped anyway). */
const MAX_PAGE_BYTES = 1024 * 1024;

/** `SERVICE_OCR_LANGS`: Tesseract language names joined by '+'. */
const LANGS = /^[A-Za-z_]+(\+[A-Za-z_]+)*$/;

/** Runs `tool` under the memory bound (tools.ts), keeping its stdout (OCR, and ffprobe for media-meta.ts); a missing tool skips the file. */
export async function bounded(tool: string, args: string[], signal: AbortSignal): Promise<string> {
  return (await runBounded(tool, args, { signal, maxBytes: MAX_PAGE_BYTES, skipWhenMissing: true })).stdout.toString('utf8');
}

/** The text Tesseract reads in the picture at `file`. */
export function ocrImage(file: string, langs: string, signal: AbortSignal): Promise<string> {
  if (!LANGS.test(langs)) throw new ExtractError(`SERVICE_OCR_LANGS is not a list of languages: ${langs}`);
  return bounded('tesseract', [file, 'stdout', '-l', langs], signal);
}

/** Reads the first OCR_MAX_PAGES pages of the PDF at `file` into `sink`, one rendered page at a time. */
export async function ocrPdf(file: string, langs: string, signal: AbortSignal, workDir: string, sink: TextSink): Promise<void> {
  const info = await bounded('pdfinfo', [file], signal);
  const pages = Math.min(Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? 0), OCR_MAX_PAGES);
  const dir = await mkdtemp(join(workDir, 'ocr-'));
  try {
    for (let page = 1; page <= pages && !sink.full; page++) {
      const base = join(dir, `p${page}`);
      await bounded('pdftoppm', ['-r', String(DPI), '-gray', '-png', '-singlefile', '-f', String(page), '-l', String(page), file, base], signal);
      sink.add(`${await ocrImage(`${base}.png`, langs, signal)}\n`);
      await rm(`${base}.png`, { force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
