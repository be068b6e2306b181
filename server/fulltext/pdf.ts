/**
 * PDF text through poppler's `pdftotext` in a child process at low priority
 * (tools.ts): bounded in pages (`-l`), in time (the caller's signal), in
 * output (the tool is killed once the caller's byte bound came) and in address
 * space, so a decompression bomb ends in a failure with a reason, not in the service.
 */
import { runBounded } from './tools';

/** Pages read at most. */
export const MAX_PAGES = 2000;

/** The text of the PDF at `file` (a local path), at most `maxBytes` of it, and whether the output was cut. */
export async function pdfText(file: string, signal: AbortSignal, maxBytes: number): Promise<{ text: string; capped: boolean }> {
  const { stdout, capped } = await runBounded('pdftotext', ['-enc', 'UTF-8', '-l', String(MAX_PAGES), file, '-'], { signal, maxBytes });
  // Form feeds end pages: line breaks for the stored text.
  return { text: stdout.toString('utf8').replace(/\f/g, '\n'), capped };
}
