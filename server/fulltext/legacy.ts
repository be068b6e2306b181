/**
 * Word, Excel and PowerPoint files of the 97–2003 binary formats (OLE compound files) and RTF, for search.
 * Word and RTF go through `catdoc`, Excel through `xls2csv` (Debian `catdoc`: tens of milliseconds a file);
 * PowerPoint through LibreOffice, which converts it to ODF read like any odp (office.ts): `catppt` finds no
 * text at all in a .ppt written by LibreOffice, and LibreOffice takes seconds a file (docs/fulltext.md,
 * "Legacy office files"). Each tool is a low-priority child process under the caller's signal, its output
 * bounded, its address space bounded by `prlimit` where it exists. A file without the format's signature
 * (garbage named .doc) fails before any tool runs.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { ExtractError } from './errors';
import type { TextSink } from './markup';
import { officeText } from './office';
import { runBounded } from './tools';

export type LegacyFormat = 'doc' | 'xls' | 'ppt';

/** What LibreOffice may write for one presentation at most (`prlimit --fsize`). */
const MAX_CONVERTED_BYTES = 256 * 1024 * 1024;

const OLE = Buffer.from('d0cf11e0a1b11ae1', 'hex');
const RTF = Buffer.from('{\\rtf');
const NAMES: Record<LegacyFormat, string> = { doc: 'Word 97–2003 or RTF', xls: 'Excel 97–2003', ppt: 'PowerPoint 97–2003' };

/** Reads the text of the legacy document at `file` (a local path) into `sink`; whether a bound cut it. */
export async function legacyText(format: LegacyFormat, file: string, signal: AbortSignal, workDir: string, sink: TextSink): Promise<boolean> {
  const head = await firstBytes(file, 8);
  if (!head.equals(OLE) && !(format === 'doc' && head.subarray(0, RTF.length).equals(RTF)))
    throw new ExtractError(`not a ${NAMES[format]} file (no ${format === 'doc' ? 'OLE or RTF' : 'OLE'} signature)`);
  if (format === 'ppt') return presentationText(file, signal, workDir, sink);
  // Text is at most 4 bytes a character: the sink's cap bounds what the tool may write.
  const { stdout, capped, stderr } =
    format === 'doc'
      ? await runBounded('catdoc', ['-w', '-d', 'utf-8', file], { signal, maxBytes: sink.cap * 4 })
      : await runBounded('xls2csv', ['-q0', '-c\t', '-b\n', '-d', 'utf-8', file], { signal, maxBytes: sink.cap * 4 });
  // Both exit 0 on some broken files, saying so on stderr only.
  if (stdout.length === 0 && stderr) throw new ExtractError(`${format === 'doc' ? 'catdoc' : 'xls2csv'}: ${stderr.split('\n')[0]}`);
  sink.add(stdout.toString('utf8'));
  return capped;
}

async function firstBytes(file: string, n: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(n), 0, n, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * LibreOffice converts the presentation to odp in a folder of its own, with a profile of its own (two
 * conversions sharing one race: one may exit 0 without output, so the file is checked), then the odp's
 * content.xml is read as any ODF document.
 */
async function presentationText(file: string, signal: AbortSignal, workDir: string, sink: TextSink): Promise<boolean> {
  const dir = await mkdtemp(join(workDir, 'ppt-'));
  try {
    const outDir = join(dir, 'out');
    const args = [
      `-env:UserInstallation=file://${join(dir, 'profile')}`,
      '--headless',
      '--norestore',
      '--nolockcheck',
      '--convert-to',
      'odp',
      '--outdir',
      outDir,
      file,
    ];
    await runBounded('soffice', args, { signal, maxBytes: 64 * 1024, limits: [`--fsize=${MAX_CONVERTED_BYTES}`], env: { ...process.env, HOME: dir } });
    const odp = join(outDir, `${basename(file, extname(file))}.odp`);
    const size = await stat(odp).then(
      (s) => s.size,
      () => {
        throw new ExtractError('LibreOffice could not read it as a presentation (no output)');
      },
    );
    await officeText('odf', { size, read: async (span) => createReadStream(odp, { start: span.start, end: span.end }) }, sink, signal);
    return sink.capped;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
