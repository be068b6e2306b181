/**
 * The outside programs extraction runs (pdftotext, Tesseract, poppler's renderers, ffprobe, catdoc,
 * LibreOffice): found on PATH once, run at low priority (lib/run-tool.ts) and, where util-linux's `prlimit`
 * exists, bounded in address space, so a decompression bomb or a giant picture ends in a failure with a
 * reason, not in the service. Time is the caller's signal; output is cut at the caller's byte bound.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runToolOutput } from '../lib/run-tool';
import { ExtractError } from './errors';

/** A tool's address space at most (Linux, with prlimit). */
export const MAX_MEMORY_BYTES = 1024 * 1024 * 1024;

/**
 * A tool run's time at most, enforced by the launcher itself (lib/tool-launcher.ts), so a tool ends even
 * while the service's own timer cannot fire: the longest a file may take (OCR, extract.ts), the caller's
 * signal being the usual bound.
 */
const MAX_TOOL_MS = 10 * 60_000;

/** The Debian package of each tool, for the message when one is missing. */
const PACKAGES: Record<string, string> = {
  tesseract: 'tesseract-ocr',
  ffprobe: 'ffmpeg',
  catdoc: 'catdoc',
  xls2csv: 'catdoc',
  soffice: 'libreoffice-impress-nogui',
};

const found = new Map<string, string | null>();
/** A program's absolute path on PATH, or null (looked up once). */
export function onPath(bin: string): string | null {
  if (!found.has(bin)) {
    found.set(bin, null);
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      try {
        accessSync(join(dir, bin), constants.X_OK);
        found.set(bin, join(dir, bin));
        break;
      } catch {
        /* not here */
      }
    }
  }
  return found.get(bin)!;
}

export interface BoundedOptions {
  signal: AbortSignal;
  /** Stdout kept at most; the tool is killed past it (`capped`). */
  maxBytes: number;
  /** More prlimit bounds (e.g. `--fsize=…`). */
  limits?: string[];
  env?: NodeJS.ProcessEnv;
  /** A missing tool skips the file (not a failure of it): OCR and media tools are optional. */
  skipWhenMissing?: boolean;
}

/** Runs `tool` under the memory bound; a missing tool or a failed run is an ExtractError naming it. */
export async function runBounded(tool: string, args: string[], o: BoundedOptions) {
  const bin = onPath(tool);
  if (!bin) throw new ExtractError(`${tool} is not installed (Debian: ${PACKAGES[tool] ?? 'poppler-utils'})`, o.skipWhenMissing ? { skip: true } : undefined);
  const prlimit = process.platform === 'linux' ? onPath('prlimit') : null;
  const run = { signal: o.signal, maxBytes: o.maxBytes, env: o.env, timeoutMs: MAX_TOOL_MS };
  try {
    return prlimit
      ? await runToolOutput(prlimit, [`--as=${MAX_MEMORY_BYTES}`, ...(o.limits ?? []), '--', bin, ...args], run)
      : await runToolOutput(bin, args, run);
  } catch (e) {
    if (o.signal.aborted) throw e;
    throw ExtractError.from(e, `${tool} failed`);
  }
}
