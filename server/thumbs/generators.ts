/**
 * The generators of the spec's table. Each writes `<workDir>/thumb.jpg`
 * (about 320 px on the long edge, JPEG quality 80) or says `skipped`; a
 * failure throws with the sentence stored on the node. Heavy tools run as
 * low-priority child processes (run-tool.ts); sharp decodes on libuv's
 * thread pool with shrink-on-load, never on the event loop.
 */
import { existsSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { extOf } from '../lib/paths';
import { runTool } from '../lib/run-tool';
import type { ThumbKind } from './kinds';
import type { Source } from './source';
import type { ThumbTools } from './tools';
import { loadSharp } from '../lib/sharp';

export const THUMB_BOX = 320;
const JPEG_QUALITY = 80;
const WAVE = '320x120';
const LUMA_MIN = 24;
const VIDEO_SCAN_SECONDS = 10;

export interface RenderJob {
  kind: ThumbKind;
  name: string;
  source: Source;
  workDir: string;
  tools: ThumbTools;
  signal: AbortSignal;
}

/** Runs the generator of `job.kind`; resolves with the JPEG's path, or `skipped` when no generator applies. */
export async function render(job: RenderJob): Promise<{ file: string } | 'skipped'> {
  const out = join(job.workDir, 'thumb.jpg');
  const { tools } = job;
  switch (job.kind) {
    case 'image':
      await toJpeg(job.source.buffer ?? inputFile(job), out);
      return { file: out };
    case 'heif':
      throw new Error('HEIC and AVIF images are not supported');
    case 'svg':
      if (!tools.svg) return 'skipped';
      await toJpeg(inputFile(job), out);
      return { file: out };
    case 'bmp':
      if (!tools.ffmpeg) break;
      await ffmpegFrame(job, tools.ffmpeg, ['-i', inputFile(job)], 'null');
      await toJpeg(join(job.workDir, 'frame.png'), out);
      return { file: out };
    case 'video':
      if (!tools.ffmpeg) break;
      await videoFrame(job, tools.ffmpeg);
      await toJpeg(join(job.workDir, 'frame.png'), out, { width: THUMB_BOX });
      return { file: out };
    case 'audio':
      if (!tools.ffmpeg) break;
      await runTool(
        tools.ffmpeg,
        ['-v', 'error', '-y', '-i', inputOf(job), '-filter_complex', `showwavespic=s=${WAVE}:colors=0x3b82f6`, '-frames:v', '1', 'wave.png'],
        { signal: job.signal, cwd: job.workDir },
      );
      await toJpeg(produced(job.workDir, 'wave.png', 'ffmpeg'), out, { noResize: true });
      return { file: out };
    case 'pdf':
      if (!tools.pdftoppm) break;
      await toJpeg(await pdfPage(job, tools.pdftoppm, inputFile(job)), out);
      return { file: out };
    case 'office': {
      if (!tools.soffice || !tools.pdftoppm) break;
      await toJpeg(await pdfPage(job, tools.pdftoppm, await officeToPdf(inputFile(job), job.workDir, tools.soffice, job.signal)), out);
      return { file: out };
    }
    case 'other':
      break;
  }
  await placeholder(job.name, out, tools.svg);
  return { file: out };
}

const inputFile = (job: RenderJob): string => {
  if (!job.source.file) throw new Error('no local input for this generator');
  return job.source.file;
};
const inputOf = (job: RenderJob): string => job.source.file ?? job.source.url ?? inputFile(job);

/** The path of a file a tool should have written; a tool that exited 0 without writing it is an error. */
function produced(dir: string, name: string, tool: string): string {
  const p = join(dir, name);
  if (!existsSync(p)) throw new Error(`${tool} exited 0 without writing ${name}`);
  return p;
}

/** Scales into the 320 box (or to 320 wide), white behind transparency, JPEG q80. */
async function toJpeg(input: string | Buffer, out: string, o: { width?: number; noResize?: boolean } = {}): Promise<void> {
  const sharp = await loadSharp();
  let img = sharp(input, { failOn: 'none', limitInputPixels: 268_402_689, sequentialRead: true }).rotate();
  if (!o.noResize)
    img = o.width ? img.resize({ width: o.width, withoutEnlargement: true }) : img.resize(THUMB_BOX, THUMB_BOX, { fit: 'inside', withoutEnlargement: true });
  await img.flatten({ background: '#ffffff' }).jpeg({ quality: JPEG_QUALITY }).toFile(out);
}

async function ffmpegFrame(job: RenderJob, ffmpeg: string, input: string[], filter: string): Promise<void> {
  await runTool(ffmpeg, ['-v', 'error', '-y', ...input, '-vf', filter, '-frames:v', '1', '-an', 'frame.png'], { signal: job.signal, cwd: job.workDir });
  produced(job.workDir, 'frame.png', 'ffmpeg');
}

/** The first frame brighter than LUMA_MIN within the first seconds; the very first frame when all of them are dark. */
async function videoFrame(job: RenderJob, ffmpeg: string): Promise<void> {
  const input = inputOf(job);
  const scale = `scale=${THUMB_BOX}:-2`;
  await runTool(
    ffmpeg,
    [
      '-v',
      'error',
      '-y',
      '-t',
      String(VIDEO_SCAN_SECONDS),
      '-i',
      input,
      '-vf',
      `signalstats,metadata=mode=select:key=lavfi.signalstats.YAVG:value=${LUMA_MIN}:function=greater,${scale}`,
      '-frames:v',
      '1',
      '-an',
      'frame.png',
    ],
    { signal: job.signal, cwd: job.workDir },
  );
  if (!existsSync(join(job.workDir, 'frame.png'))) await ffmpegFrame(job, ffmpeg, ['-i', input], scale);
}

async function pdfPage(job: RenderJob, pdftoppm: string, pdf: string): Promise<string> {
  await runTool(pdftoppm, ['-f', '1', '-l', '1', '-r', '96', '-png', '-singlefile', pdf, join(job.workDir, 'page')], { signal: job.signal });
  return produced(job.workDir, 'page.png', 'pdftoppm');
}

/**
 * LibreOffice headless converts `input` to `<workDir>/pdf/<name>.pdf`, with a
 * profile of its own per job: two conversions sharing one profile race (one
 * may exit 0 without output, so the file is checked). Thumbnails and the PDF
 * rendition of office previews share it.
 */
export async function officeToPdf(input: string, workDir: string, soffice: string, signal: AbortSignal): Promise<string> {
  const outDir = join(workDir, 'pdf');
  await runTool(
    soffice,
    [
      `-env:UserInstallation=file://${join(workDir, 'profile')}`,
      '--headless',
      '--norestore',
      '--nolockcheck',
      '--convert-to',
      'pdf',
      '--outdir',
      outDir,
      input,
    ],
    {
      signal,
      env: { ...process.env, HOME: workDir },
    },
  );
  return produced(outDir, basename(input, extname(input)) + '.pdf', 'soffice');
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A card tinted by the extension (same extension, same colour) with the extension written on it. */
async function placeholder(name: string, out: string, svg: boolean): Promise<void> {
  const ext = (extOf(name) || 'file').slice(0, 5).toUpperCase();
  let hash = 0;
  for (const c of ext) hash = (hash * 31 + c.charCodeAt(0)) % 360;
  const sharp = await loadSharp();
  if (!svg) {
    await sharp({ create: { width: 240, height: THUMB_BOX, channels: 3, background: `hsl(${hash}, 55%, 88%)` } })
      .jpeg({ quality: JPEG_QUALITY })
      .toFile(out);
    return;
  }
  const card = `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="${THUMB_BOX}">
  <rect width="240" height="${THUMB_BOX}" fill="#ffffff"/>
  <rect x="16" y="16" width="208" height="${THUMB_BOX - 32}" rx="14" fill="hsl(${hash}, 55%, 88%)"/>
  <text x="120" y="${THUMB_BOX / 2 + 14}" font-family="sans-serif" font-size="44" font-weight="700" text-anchor="middle" fill="hsl(${hash}, 50%, 32%)">${escapeXml(ext)}</text>
</svg>`;
  await sharp(Buffer.from(card)).jpeg({ quality: JPEG_QUALITY }).toFile(out);
}
