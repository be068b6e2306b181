/**
 * Searchable metadata of photos, audio and video (docs/fulltext.md, "Photo, audio and video metadata"): one
 * short text of values (camera, lens, places, title, artist, album, keywords, …) stored beside a file's
 * text, and the date taken (or the recording's creation time) for the `taken_from`/`taken_to` filters.
 *
 * Photos: sharp reads the header only (no pixels: a 50,000 × 50,000 picture costs what a small one does)
 * and hands over the raw EXIF, IPTC and XMP blocks, parsed here within bounds (photo-meta.ts). A picture
 * with no local path is read from its first PHOTO_HEAD_BYTES only. Audio and video: ffprobe's format tags,
 * in a child process under the OCR tools' bounds (memory, output, the extraction's time); a file with no
 * local path is probed on a sparse copy of its head and tail (two range reads: ID3v2 and a fast-start
 * `moov` lead, ID3v1 and a trailing `moov` end the file), never copied whole.
 */
import { open, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Metadata } from 'sharp';
import { loadSharp } from '../lib/sharp';
import { extOf } from '../lib/paths';
import { ExtractError } from './errors';
import type { FileSource } from './extract';
import { bounded } from './ocr';
import { parseExif, parseIptc, parseXmp } from './photo-meta';

/** Characters of metadata text stored per file at most. */
export const META_CAP = 16 * 1024;
/** A remote picture's metadata is looked for in its first bytes (JPEG's APP segments come before the pixels). */
export const PHOTO_HEAD_BYTES = 1024 * 1024;
/** A remote audio or video file: the bytes read from its start and from its end. */
export const MEDIA_HEAD_BYTES = 1024 * 1024;
export const MEDIA_TAIL_BYTES = 4 * 1024 * 1024;

/** Audio and video files whose tags are read (by extension). */
export const MEDIA_EXTS = ['mp3', 'm4a', 'aac', 'flac', 'ogg', 'oga', 'opus', 'wav', 'wma', 'mp4', 'm4v', 'mov', 'mkv', 'webm', 'avi', '3gp', 'wmv'];

export interface MediaMeta {
  /** The values, one a line, at most META_CAP characters ('' when the file says nothing). */
  text: string;
  /** When the photo was taken or the recording made (epoch ms), or null. */
  taken: number | null;
}

/** Values once each (case aside), in order, with the date taken as a day first so `2019` or `2019-06` finds it. */
function compose(values: string[], taken: number | null): MediaMeta {
  const seen = new Set<string>();
  const lines: string[] = [];
  if (taken !== null) lines.push(new Date(taken).toISOString().slice(0, 10));
  for (const v of values) {
    const k = v.toLowerCase();
    if (v && !seen.has(k)) seen.add(k), lines.push(v);
  }
  return { text: lines.join('\n').slice(0, META_CAP), taken };
}

/** A photo's metadata from its file (a local path) or its first bytes. An unreadable header fails with a reason. */
export async function photoMeta(input: string | Buffer): Promise<MediaMeta> {
  let m: Metadata;
  const sharp = await loadSharp();
  try {
    m = await sharp(input, { limitInputPixels: false, failOn: 'none' }).metadata();
  } catch (e) {
    throw new ExtractError(`not a readable picture: ${(e as Error).message}`);
  }
  const exif = parseExif(m.exif);
  const iptc = parseIptc(m.iptc);
  const xmp = parseXmp(m.xmp);
  return compose([...exif.values, ...iptc.values, ...xmp.values], exif.taken ?? xmp.taken ?? iptc.taken);
}

/** ffprobe's format tags kept as text (lower-cased keys). */
const AV_TAGS = ['title', 'artist', 'album_artist', 'album', 'composer', 'genre', 'date', 'year', 'comment', 'description', 'show', 'publisher', 'copyright'];

/** An audio or video file's tags and duration (ffprobe on a local path). Garbage tags give what ffprobe makes of them. */
export async function avMeta(file: string, signal: AbortSignal): Promise<MediaMeta> {
  const out = await bounded('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', file], signal);
  let format: { duration?: string; tags?: Record<string, unknown> };
  try {
    format = JSON.parse(out).format ?? {};
  } catch {
    throw new ExtractError('ffprobe gave no readable answer (tags too long or broken)');
  }
  const tags = new Map(Object.entries(format.tags ?? {}).map(([k, v]) => [k.toLowerCase(), String(v).slice(0, 2000).trim()]));
  const values = AV_TAGS.map((k) => tags.get(k) ?? '');
  const secs = Number(format.duration);
  if (Number.isFinite(secs) && secs > 0) values.push(duration(secs));
  const created = Date.parse(tags.get('creation_time') ?? '');
  return compose(values, Number.isNaN(created) ? null : created);
}

/** `h:mm:ss` or `m:ss`. */
function duration(secs: number): string {
  const s = Math.round(secs);
  const mm = String(Math.floor(s / 60) % 60);
  const ss = String(s % 60).padStart(2, '0');
  return s >= 3600 ? `${Math.floor(s / 3600)}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

/**
 * Runs `use` on a local stand-in for a remote audio or video file of `size` bytes: the file whole when it is
 * small, else a sparse file of the same size holding only its head and its tail (holes read as zeros).
 */
export async function withHeadAndTail<T>(
  size: number,
  read: (start: number, end: number) => Promise<AsyncIterable<unknown>>,
  workDir: string,
  use: (file: string) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(workDir, 'meta-'));
  try {
    const file = join(dir, 'input');
    const fh = await open(file, 'w');
    try {
      await fh.truncate(size);
      const spans: Array<[number, number]> =
        size <= MEDIA_HEAD_BYTES + MEDIA_TAIL_BYTES
          ? [[0, size - 1]]
          : [
              [0, MEDIA_HEAD_BYTES - 1],
              [size - MEDIA_TAIL_BYTES, size - 1],
            ];
      for (const [start, end] of spans) {
        let at = start;
        for await (const chunk of await read(start, end)) {
          const b = chunk as Buffer;
          await fh.write(b, 0, Math.min(b.length, end + 1 - at), at);
          at += b.length;
          if (at > end) break;
        }
      }
    } finally {
      await fh.close();
    }
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Pictures whose metadata is read (sharp reads their headers; BMP has none and is read by OCR only). */
export const PHOTO_EXTS = ['jpg', 'jpeg', 'png', 'tif', 'tiff', 'webp'];

/**
 * The metadata of a picture (`kind` image) or an audio or video file (`media`). `tolerant`: a failure gives
 * no metadata instead of failing the file (a picture read by OCR next still has its text to give).
 */
export async function mediaMeta(kind: 'image' | 'media', src: FileSource, signal: AbortSignal, workDir: string, tolerant: boolean): Promise<MediaMeta> {
  if (kind === 'image' && !PHOTO_EXTS.includes(extOf(src.name))) return { text: '', taken: null };
  try {
    const local = await src.localFile();
    if (kind === 'image') return await photoMeta(local ?? (await head(src, Math.min(src.size, PHOTO_HEAD_BYTES), signal)));
    if (local) return await avMeta(local, signal);
    return await withHeadAndTail(
      src.size,
      (start, end) => src.read({ start, end }, signal),
      workDir,
      (file) => avMeta(file, signal),
    );
  } catch (e) {
    if (!tolerant || signal.aborted) throw e;
    return { text: '', taken: null };
  }
}

/** The first `n` bytes of a file. */
async function head(src: FileSource, n: number, signal: AbortSignal): Promise<Buffer> {
  const parts: Buffer[] = [];
  let got = 0;
  for await (const chunk of await src.read({ start: 0, end: n - 1 }, signal)) {
    parts.push(chunk as Buffer);
    got += (chunk as Buffer).length;
    if (got >= n) break;
  }
  return Buffer.concat(parts).subarray(0, n);
}
