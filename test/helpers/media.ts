/**
 * Photos, songs and videos with known metadata, made in the test: sharp writes EXIF and XMP, an IPTC
 * block is spliced in by hand (sharp writes none), ffmpeg writes audio and video tags.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';

export interface PhotoFacts {
  make?: string;
  model?: string;
  lens?: string;
  /** EXIF DateTimeOriginal, "YYYY:MM:DD HH:MM:SS". */
  taken?: string;
  /** EXIF OffsetTimeOriginal, "+03:00". */
  offset?: string;
  description?: string;
  /** XMP photoshop:City and dc:subject. */
  xmpCity?: string;
  keywords?: string[];
  /** IPTC record 2 datasets by number (90 City, 92 Sub-location, 95 Province, 101 Country, 5 Title). */
  iptc?: Record<number, string>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/** A small JPEG carrying `f` in its EXIF, XMP and IPTC blocks. */
export async function photoWith(f: PhotoFacts, size = 32): Promise<Buffer> {
  const ifd0: Record<string, string> = {};
  if (f.make) ifd0.Make = f.make;
  if (f.model) ifd0.Model = f.model;
  if (f.description) ifd0.ImageDescription = f.description;
  const exif: Record<string, string> = {};
  if (f.taken) exif.DateTimeOriginal = f.taken;
  if (f.offset) exif.OffsetTimeOriginal = f.offset;
  if (f.lens) exif.LensModel = f.lens;
  let img = sharp({ create: { width: size, height: size, channels: 3, background: '#8a9' } }).jpeg();
  if (Object.keys(ifd0).length || Object.keys(exif).length) img = img.withExif({ IFD0: ifd0, IFD2: exif });
  if (f.xmpCity || f.keywords)
    img = img.withXmp(
      `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"${f.xmpCity ? ` photoshop:City="${esc(f.xmpCity)}"` : ''}>${f.keywords ? `<dc:subject><rdf:Bag>${f.keywords.map((k) => `<rdf:li>${esc(k)}</rdf:li>`).join('')}</rdf:Bag></dc:subject>` : ''}</rdf:Description></rdf:RDF></x:xmpmeta>`,
    );
  const jpeg = await img.toBuffer();
  return f.iptc ? withSegment(jpeg, 0xed, iptcResource(f.iptc)) : jpeg;
}

/** A JPEG with one more APPn segment (`marker` 0xE0–0xEF) right after its start. */
export function withSegment(jpeg: Buffer, marker: number, body: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), head, body, jpeg.subarray(2)]);
}

/** An APP13 body: Photoshop's resource 0x0404 holding IPTC-IIM record-2 datasets. */
function iptcResource(datasets: Record<number, string>): Buffer {
  const iim = Buffer.concat(
    Object.entries(datasets).map(([n, v]) => {
      const value = Buffer.from(v, 'utf8');
      const h = Buffer.from([0x1c, 2, Number(n), 0, 0]);
      h.writeUInt16BE(value.length, 3);
      return Buffer.concat([h, value]);
    }),
  );
  const size = Buffer.alloc(4);
  size.writeUInt32BE(iim.length);
  const pad = iim.length % 2 ? Buffer.from([0]) : Buffer.alloc(0);
  return Buffer.concat([Buffer.from('Photoshop 3.0\0', 'latin1'), Buffer.from('8BIM', 'latin1'), Buffer.from([4, 4, 0, 0]), size, iim, pad]);
}

/** A JPEG whose frame header says `w` × `h` pixels (its data is a small picture's). */
export async function hugeHeader(w: number, h: number): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
    .jpeg()
    .toBuffer();
  const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
  const out = Buffer.from(jpeg);
  out.writeUInt16BE(h, sof + 5);
  out.writeUInt16BE(w, sof + 7);
  return out;
}

/**
 * A recording made by ffmpeg with `tags` (`-metadata k=v`): `ext` mp3 (a sine tone) or mp4 (a test picture
 * and a tone, as Motion JPEG so its size grows with `frame`; its `moov` at the end as ffmpeg writes it by default).
 */
export function recordingWith(dir: string, name: string, tags: Record<string, string>, o: { seconds?: number; frame?: string } = {}): Buffer {
  const file = join(dir, name);
  const secs = String(o.seconds ?? 2);
  const meta = Object.entries(tags).flatMap(([k, v]) => ['-metadata', `${k}=${v}`]);
  const input = name.endsWith('.mp3')
    ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${secs}`, '-c:a', 'libmp3lame', '-b:a', '64k']
    : [
        '-f',
        'lavfi',
        '-i',
        `testsrc=duration=${secs}:size=${o.frame ?? '160x120'}:rate=25`,
        '-f',
        'lavfi',
        '-i',
        `sine=duration=${secs}`,
        '-c:v',
        'mjpeg',
        '-q:v',
        '1',
        '-c:a',
        'aac',
      ];
  execFileSync('ffmpeg', ['-v', 'error', '-y', ...input, ...meta, file], { timeout: 60_000 });
  return readFileSync(file);
}
