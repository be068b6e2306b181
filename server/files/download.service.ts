/**
 * Raw downloads: resolves a path for reading and opens the driver's stream
 * (the local driver reads in 1 MiB chunks, the throughput lever here), one
 * span at a time or as a multipart/byteranges body.
 */
import { Readable } from 'node:stream';
import type { Principal } from '../auth';
import type { Catalogue } from '../catalogue';
import { mimeOf } from '../catalogue';
import { AppError } from '../errors';
import { randomToken } from '../lib/crypto';
import { baseName } from '../lib/paths';
import type { StorageDriver } from '../storage';
import { etagOf } from './entry';
import type { Span } from './ranges';

export interface RawFile {
  name: string;
  size: number;
  mtime: number;
  /** Quoted strong validator. */
  etag: string;
  mime: string;
  /** Opens the bytes of `span` (the whole file without one). */
  open(span?: Span, signal?: AbortSignal): Promise<Readable>;
  /** The contained real path when the storage is a local disk (fast send path), else undefined. */
  localPath?: string;
}

export class DownloadService {
  constructor(private cat: Catalogue) {}

  /** The file at `path` for the caller; `not_found` when missing or a folder. */
  async file(p: Principal, path: string): Promise<RawFile> {
    const { storage, rel } = this.cat.resolve(p, path, 'viewer');
    if (rel === '') throw new AppError('not_found', { path }, { reason: 'a folder' });
    const driver: StorageDriver = await this.cat.driverFor(storage.id);
    // A local disk answers stat and path in one containment check (a real-path walk costs more than the send).
    const local = driver.statLocal ? await driver.statLocal(rel) : undefined;
    const e = local?.entry ?? (await driver.stat(rel));
    if (e.type !== 'file') throw new AppError('not_found', { path }, { reason: 'a folder' });
    const raw = etagOf(e.size, e.mtime, e.etag);
    return {
      name: baseName(rel),
      size: e.size,
      mtime: e.mtime,
      etag: raw.startsWith('"') ? raw : `"${raw}"`,
      mime: e.mime ?? mimeOf(baseName(rel)),
      open: (span, signal) => driver.read(rel, span ? { start: span.start, end: span.end } : undefined, signal),
      localPath: local?.path ?? (driver.localPath ? await driver.localPath(rel) : undefined),
    };
  }
}

/** A multipart/byteranges body for `spans` of `f`, with its exact length and content type. */
export function byteranges(f: RawFile, spans: Span[], signal?: AbortSignal): { body: Readable; length: number; type: string } {
  const boundary = 'fd' + randomToken(12);
  const head = (s: Span) => `\r\n--${boundary}\r\nContent-Type: ${f.mime}\r\nContent-Range: bytes ${s.start}-${s.end}/${f.size}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  let length = Buffer.byteLength(tail);
  for (const s of spans) length += Buffer.byteLength(head(s)) + (s.end - s.start + 1);
  async function* parts() {
    for (const s of spans) {
      yield Buffer.from(head(s));
      for await (const chunk of await f.open(s, signal)) yield chunk as Buffer;
    }
    yield Buffer.from(tail);
  }
  return { body: Readable.from(parts(), { objectMode: false }), length, type: `multipart/byteranges; boundary=${boundary}` };
}
