/**
 * PDF text through poppler's `pdftotext` in a child process at low priority
 * (lib/run-tool.ts): bounded in pages (`-l`), in time (the caller's signal),
 * in output (the tool is killed once the caller's byte bound came) and, where
 * util-linux's `prlimit` exists, in address space (MAX_MEMORY_BYTES), so a
 * decompression bomb ends in a failure with a reason, not in the service.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runToolOutput } from '../lib/run-tool';
import { ExtractError } from './errors';

/** Pages read at most. */
export const MAX_PAGES = 2000;
/** The tool's address space at most (Linux, with prlimit). */
export const MAX_MEMORY_BYTES = 1024 * 1024 * 1024;

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

/** The text of the PDF at `file` (a local path), at most `maxBytes` of it, and whether the output was cut. */
export async function pdfText(file: string, signal: AbortSignal, maxBytes: number): Promise<{ text: string; capped: boolean }> {
  const tool = onPath('pdftotext');
  if (!tool) throw new ExtractError('pdftotext is not installed (Debian: poppler-utils)');
  const args = ['-enc', 'UTF-8', '-l', String(MAX_PAGES), file, '-'];
  const limit = process.platform === 'linux' ? onPath('prlimit') : null;
  try {
    const { stdout, capped } = limit
      ? await runToolOutput(limit, [`--as=${MAX_MEMORY_BYTES}`, '--', tool, ...args], { signal, maxBytes })
      : await runToolOutput(tool, args, { signal, maxBytes });
    // Form feeds end pages: line breaks for the stored text.
    return { text: stdout.toString('utf8').replace(/\f/g, '\n'), capped };
  } catch (e) {
    if (signal.aborted) throw e;
    throw ExtractError.from(e, 'pdftotext failed');
  }
}
