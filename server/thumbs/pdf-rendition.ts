/**
 * Read-only previews of office documents without a document server: the
 * file's PDF rendition, made by LibreOffice headless (the converter the
 * thumbnails use) and cached as `<cache>/<hash of place and etag>.pdf`, so
 * the same bytes are converted once and a changed file gets a new rendition.
 * Conversions run one at a time: each takes a core for a second or two, and
 * the machine also serves requests and thumbnails.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors';
import type { OpenFile } from '../files';
import { extOf } from '../lib/paths';
import { officeToPdf } from './generators';
import { kindOf } from './kinds';
import { thumbTools, type ThumbTools } from './tools';

export const PDF_TIMEOUT_MS = 120_000;
/** Largest office file converted (a download from a remote storage first). */
export const PDF_MAX_INPUT_BYTES = 512 * 1024 * 1024;
/** Renditions not read for this long are removed by `sweep`. */
const KEEP_MS = 7 * 86_400_000;

export class PdfRenditions {
  private inflight = new Map<string, Promise<string>>();
  private lane: Promise<unknown> = Promise.resolve();

  constructor(
    readonly cacheDir: string,
    private tools: () => ThumbTools = thumbTools,
  ) {}

  /**
   * The path of the PDF rendition of `file` (opened through the file service
   * by the caller, so access is already decided). Not an office document →
   * `unsupported_media_type`; no LibreOffice on the machine → `not_configured`.
   */
  async pdf(file: OpenFile): Promise<string> {
    const ext = extOf(file.name);
    if (kindOf(file.mime, file.name) !== 'office') throw new AppError('unsupported_media_type', { ext }, { ext });
    const soffice = this.tools().soffice;
    if (!soffice) throw new AppError('not_configured', { feature: 'soffice (office previews)' });
    if (file.size > PDF_MAX_INPUT_BYTES) throw new AppError('payload_too_large', { max: PDF_MAX_INPUT_BYTES });
    const key = createHash('sha256').update(`${file.place.storage_id}\0${file.place.rel}\0${file.etag}`).digest('hex').slice(0, 40);
    const out = join(this.cacheDir, `${key}.pdf`);
    if (await exists(out)) {
      // Reading counts as use for the sweep.
      const now = new Date();
      await utimes(out, now, now).catch(() => {});
      return out;
    }
    let p = this.inflight.get(key);
    if (!p) {
      const run = this.lane.then(() => this.convert(file, soffice, out));
      this.lane = run.catch(() => {});
      p = run.finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async convert(file: OpenFile, soffice: string, out: string): Promise<string> {
    if (await exists(out)) return out;
    await mkdir(this.cacheDir, { recursive: true });
    // Inside the cache folder, so the finished PDF is renamed in place (same file system).
    const work = await mkdtemp(join(this.cacheDir, '.work-'));
    const signal = AbortSignal.timeout(PDF_TIMEOUT_MS);
    try {
      let input = await file.localFile();
      if (!input) {
        input = join(work, `input.${extOf(file.name) || 'bin'}`);
        await pipeline(await file.read(undefined, signal), createWriteStream(input), { signal });
      }
      await rename(await officeToPdf(input, work, soffice, signal), out);
      return out;
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** Removes renditions not read for a week and work folders left by a crash; returns how many went. */
  async sweep(now = Date.now()): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.cacheDir);
    } catch {
      return 0;
    }
    let n = 0;
    for (const name of names) {
      const p = join(this.cacheDir, name);
      try {
        const st = await stat(p);
        if (now - st.mtimeMs < (name.startsWith('.work-') ? PDF_TIMEOUT_MS * 2 : KEEP_MS)) continue;
        await rm(p, { recursive: true, force: true });
        n++;
      } catch {
        /* removed meanwhile */
      }
    }
    return n;
  }
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );
