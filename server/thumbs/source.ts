/**
 * Where a generator reads the file from, fetching as few bytes as the format
 * allows: a local storage hands over its real path (no copy); a JPEG on a
 * remote storage is first tried through its embedded EXIF thumbnail (one
 * ranged read of the head); video and audio on a remote storage are read by
 * ffmpeg through a loopback range server, so it seeks instead of downloading;
 * everything else is downloaded once into the job's work folder. Every byte
 * pulled through the driver is counted.
 */
import { createServer } from 'node:http';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { extOf } from '../lib/paths';
import { exifThumbnail } from './exif';
import type { ThumbKind } from './kinds';

export interface Source {
  /** A local file the tools can open. */
  file?: string;
  /** A loopback URL answering HTTP range requests. */
  url?: string;
  /** An embedded preview already small enough to be the thumbnail's input. */
  buffer?: Buffer;
  close(): Promise<void>;
}

/** Where a file's bytes come from (the file service's storage operations for one place). */
export interface SourceReader {
  read(range?: { start: number; end?: number }, signal?: AbortSignal): Promise<Readable>;
  /** The local fast path: the file's real path on a local disk, or null. */
  localFile(): Promise<string | null>;
}

export interface SourceTarget {
  reader: SourceReader;
  name: string;
  size: number;
  kind: ThumbKind;
  mime: string | null;
}

const EXIF_HEAD_BYTES = 128 * 1024;
const noop = async () => {};

/** Counts the bytes that flow through it. */
export class ByteCounter {
  bytes = 0;
  tap(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        this.bytes += chunk.length;
        cb(null, chunk);
      },
    });
  }
}

/**
 * Opens the input for one generator run. Throws `too large` before any byte
 * is fetched when `maxBytes` is exceeded; the caller must `close()` the result.
 */
export async function openSource(t: SourceTarget, workDir: string, counter: ByteCounter, signal: AbortSignal, maxBytes: number): Promise<Source> {
  const local = await t.reader.localFile();
  if (local) return { file: local, close: noop };
  if (t.kind === 'video' || t.kind === 'audio') return rangeServer(t.reader, t.size, counter);
  if (t.size > maxBytes) throw new Error(`file too large for a thumbnail (${t.size} bytes, limit ${maxBytes})`);
  const file = join(workDir, `input.${extOf(t.name) || 'bin'}`);
  if (t.kind === 'image' && /jpe?g/.test(t.mime ?? extOf(t.name)) && t.size > EXIF_HEAD_BYTES) {
    const head = await readAll(await t.reader.read({ start: 0, end: EXIF_HEAD_BYTES - 1 }, signal), counter);
    const embedded = exifThumbnail(head);
    if (embedded) return { buffer: embedded, close: noop };
    // No preview: the head already fetched is the start of the download, not fetched twice.
    await writeFile(file, head);
    await pipeline(await t.reader.read({ start: head.length, end: t.size - 1 }, signal), counter.tap(), createWriteStream(file, { flags: 'a' }), { signal });
    return { file, close: noop };
  }
  await pipeline(await t.reader.read(undefined, signal), counter.tap(), createWriteStream(file), { signal });
  return { file, close: noop };
}

async function readAll(stream: Readable, counter: ByteCounter): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) {
    counter.bytes += (c as Buffer).length;
    parts.push(c as Buffer);
  }
  return Buffer.concat(parts);
}

/** A one-job HTTP server on 127.0.0.1 that answers range requests from the storage (path guarded by a random token). */
async function rangeServer(reader: SourceReader, size: number, counter: ByteCounter): Promise<Source> {
  const secret = randomBytes(12).toString('hex');
  const server = createServer(async (req, res) => {
    if (req.url !== `/${secret}`) return void res.writeHead(404).end();
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    if (start >= size && size > 0) return void res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
    const headers = { 'accept-ranges': 'bytes', 'content-length': String(Math.max(0, end - start + 1)), 'content-type': 'application/octet-stream' };
    if (req.method === 'HEAD') return void res.writeHead(200, { ...headers, 'content-length': String(size) }).end();
    res.writeHead(m ? 206 : 200, m ? { ...headers, 'content-range': `bytes ${start}-${end}/${size}` } : headers);
    try {
      await pipeline(await reader.read({ start, end }), counter.tap(), res);
    } catch {
      // ffmpeg closes connections when it seeks; nothing to report.
      res.destroy();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/${secret}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
