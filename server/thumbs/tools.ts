/**
 * Which thumbnail tools this machine has. The probe only looks the binaries up
 * on PATH (no process is started), and its answer is cached for an hour as the
 * spec asks, so a tool installed while the service runs is seen within the hour.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { sharpReadsSvg } from '../lib/sharp';

export interface ThumbTools {
  ffmpeg: string | null;
  pdftoppm: string | null;
  soffice: string | null;
  magick: string | null;
  /** sharp's libvips was built with an SVG loader (librsvg). */
  svg: boolean;
}

const PROBE_TTL_MS = 3_600_000;
let cached: { at: number; tools: ThumbTools } | null = null;

/** Absolute path of `bin` on PATH, or null. */
export function which(bin: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, bin);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

/** The tools found on PATH, probed at most once an hour (`fresh` forces a new probe). */
export function thumbTools(fresh = false): ThumbTools {
  if (!fresh && cached && Date.now() - cached.at < PROBE_TTL_MS) return cached.tools;
  const tools: ThumbTools = {
    ffmpeg: which('ffmpeg'),
    pdftoppm: which('pdftoppm'),
    soffice: which('soffice') ?? which('libreoffice'),
    magick: which('magick'),
    svg: sharpReadsSvg(),
  };
  cached = { at: Date.now(), tools };
  return tools;
}

/** The capabilities' `thumbs` object, truthful to the cached probe. */
export function thumbCapabilities() {
  const t = thumbTools();
  return {
    enabled: true,
    image: true,
    video: t.ffmpeg !== null,
    pdf: t.pdftoppm !== null,
    office: t.soffice !== null && t.pdftoppm !== null,
    audio: t.ffmpeg !== null,
    svg: t.svg,
    imagemagick: t.magick !== null,
  };
}

/** Sentences naming each missing tool and what its kind falls back to (boot warnings). */
export function missingToolWarnings(t: ThumbTools = thumbTools()): string[] {
  const out: string[] = [];
  if (!t.ffmpeg) out.push('thumbnails: ffmpeg not found (apt package ffmpeg); video and audio get a placeholder card');
  if (!t.pdftoppm) out.push('thumbnails: pdftoppm not found (apt package poppler-utils); pdf and office documents get a placeholder card');
  if (!t.soffice) out.push('thumbnails: soffice not found (apt package libreoffice-*-nogui); office documents get a placeholder card');
  if (!t.svg) out.push('thumbnails: no SVG rasteriser in sharp; svg files are skipped');
  return out;
}
