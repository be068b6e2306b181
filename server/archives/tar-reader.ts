/**
 * Listing tar and tar.gz archives from any storage: one pass over the
 * driver's read stream (gunzipped for .tar.gz / .tgz), reading the 512-byte
 * headers and skipping the data. ustar, GNU long names (`L`) and pax headers
 * (`x`: path, size, mtime) are understood. Listing only: a tar cannot be read
 * from its end like a ZIP's central directory, so even listing streams the
 * whole archive; both the archive and its inflated stream are metered against
 * the archive limit.
 */
import { createGunzip } from 'node:zlib';
import { pipeline, Transform, type Readable } from 'node:stream';
import { AppError } from '../errors';
import { MAX_ENTRIES } from './zip-reader';

export interface TarEntry {
  name: string;
  size: number;
  is_dir: boolean;
  modified: string;
  symlink: boolean;
}

const BLOCK = 512;
/** GNU long names and pax records larger than this are refused (they are names, not data). */
const MAX_META_BYTES = 1024 * 1024;
const NO_DATA = new Set(['1', '2', '3', '4', '5', '6']);
const TAR_NAME = /\.(tar|tar\.gz|tgz)$/i;

/** Whether a file name is listed as a tar (`.tar`) or gzipped tar (`.tar.gz`, `.tgz`). */
export function isTarName(name: string): boolean {
  return TAR_NAME.test(name);
}

const invalid = (reason: string) => new AppError('archive_invalid', { reason }, { reason });

/**
 * The entries of the tar archive in `stream`, in archive order. Not a tar,
 * a bad checksum, a truncated archive or broken gzip → `archive_invalid`;
 * more than `maxBytes` read or inflated (0 = no limit) → `archive_too_large`;
 * more than MAX_ENTRIES entries → `archive_invalid`. Destroys the stream
 * when it stops early.
 */
export async function listTar(stream: Readable, o: { gzip: boolean; maxBytes: number }): Promise<TarEntry[]> {
  const meter = (): Transform => {
    let n = 0;
    return new Transform({
      transform(chunk: Buffer, _enc, cb) {
        n += chunk.length;
        if (o.maxBytes > 0 && n > o.maxBytes) return cb(new AppError('archive_too_large', { max: o.maxBytes }, { max: o.maxBytes }));
        cb(null, chunk);
      },
    });
  };
  // pipeline destroys every stage with the first error; the reader's iterator then throws it.
  const done = () => {};
  const source: Readable = o.gzip ? pipeline(stream, meter(), createGunzip(), meter(), done) : pipeline(stream, meter(), done);
  const reader = new BlockReader(source);
  try {
    return await parse(reader);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw invalid((e as Error).message);
  } finally {
    source.destroy();
    stream.destroy();
  }
}

async function parse(r: BlockReader): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  let longName: string | null = null;
  let pax: Record<string, string> = {};
  for (;;) {
    const h = await r.take(BLOCK);
    if (!h) throw invalid('truncated archive: no end-of-archive blocks');
    if (h.every((b) => b === 0)) return out;
    if (!checksumOk(h)) throw invalid(out.length === 0 && longName === null ? 'not a tar archive' : 'bad header checksum');
    const type = String.fromCharCode(h[156] || 0x30);
    let size = numeric(h, 124, 12);
    if (pax.size !== undefined) size = Number(pax.size);
    if (!Number.isSafeInteger(size) || size < 0) throw invalid('bad entry size');
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'L' || type === 'x' || type === 'g' || type === 'K') {
      if (size > MAX_META_BYTES) throw invalid('oversized name record');
      const data = await r.take(padded);
      if (!data) throw invalid('truncated archive');
      const body = data.subarray(0, size);
      if (type === 'L') longName = cstring(body, 0, size);
      else if (type === 'x') pax = paxRecords(body);
      continue;
    }
    const prefix = cstring(h, 345, 155);
    const ustar = h.toString('latin1', 257, 262) === 'ustar';
    const name = pax.path ?? longName ?? (ustar && prefix ? `${prefix}/${cstring(h, 0, 100)}` : cstring(h, 0, 100));
    const mtime = pax.mtime !== undefined ? Number(pax.mtime) : numeric(h, 136, 12);
    const clean = name.replace(/^(\.\/)+/, '');
    // `tar -C dir .` stores the folder itself as `./`: not an entry of the listing.
    if (clean !== '')
      out.push({
        name: clean,
        size: type === '5' ? 0 : size,
        is_dir: type === '5' || name.endsWith('/'),
        modified: new Date((Number.isFinite(mtime) ? mtime : 0) * 1000).toISOString(),
        symlink: type === '2' || type === '1',
      });
    if (out.length > MAX_ENTRIES)
      throw new AppError('archive_invalid', { reason: `more than ${MAX_ENTRIES} entries` }, { reason: 'too_many_entries', max: MAX_ENTRIES });
    longName = null;
    pax = {};
    // Links, devices, folders and fifos carry no data whatever their size field says; unknown types are files (POSIX).
    if (!NO_DATA.has(type)) await r.skip(padded);
  }
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  return numeric(h, 148, 8) === sum;
}

/** An octal field, or GNU base-256 when the high bit of its first byte is set. */
function numeric(h: Buffer, off: number, len: number): number {
  if (h[off] & 0x80) {
    let n = h[off] & 0x7f;
    for (let i = 1; i < len; i++) n = n * 256 + h[off + i];
    return n;
  }
  const s = h
    .toString('latin1', off, off + len)
    .replace(/[\0 ]+.*$/s, '')
    .trim();
  return s === '' ? 0 : parseInt(s, 8);
}

function cstring(b: Buffer, off: number, len: number): string {
  const end = b.indexOf(0, off);
  return b.toString('utf8', off, end === -1 || end > off + len ? off + len : end);
}

/** pax records: `<length> <key>=<value>\n`. */
function paxRecords(b: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let pos = 0;
  while (pos < b.length) {
    const space = b.indexOf(0x20, pos);
    const len = Number(b.toString('latin1', pos, space));
    if (space === -1 || !Number.isSafeInteger(len) || len <= 0 || pos + len > b.length) throw invalid('bad pax header');
    const rec = b.toString('utf8', space + 1, pos + len - 1);
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    pos += len;
  }
  return out;
}

/** Exact-size reads and skips over a byte stream, without copying the data it skips. */
class BlockReader {
  private it: AsyncIterator<Buffer>;
  private buf: Buffer = Buffer.alloc(0);

  constructor(stream: Readable) {
    this.it = stream[Symbol.asyncIterator]();
  }

  /** The next `n` bytes, or null at the end of the stream (a partial tail is an error). */
  async take(n: number): Promise<Buffer | null> {
    while (this.buf.length < n) {
      const next = await this.it.next();
      if (next.done) {
        if (this.buf.length === 0) return null;
        throw invalid('truncated archive');
      }
      this.buf = this.buf.length ? Buffer.concat([this.buf, next.value]) : next.value;
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  async skip(n: number): Promise<void> {
    while (n > 0) {
      if (this.buf.length === 0) {
        const next = await this.it.next();
        if (next.done) throw invalid('truncated archive');
        this.buf = next.value;
      }
      const k = Math.min(n, this.buf.length);
      this.buf = this.buf.subarray(k);
      n -= k;
    }
  }
}
