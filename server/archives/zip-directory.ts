/**
 * The ZIP central directory, read in large blocks: one ranged read of the
 * tail (end record, ZIP64 locator and, usually, the ZIP64 end record), then
 * one ranged read streamed over the whole directory and parsed as its chunks
 * arrive (a local storage hands it over in 1 MiB chunks). A lazy reader that
 * fetches each record on its own costs two reads per entry: 200,000 for the
 * largest archive accepted.
 */
import type { Readable } from 'node:stream';
import { AppError } from '../errors';

/** A file read by byte ranges (the file service's OpenFile). */
export interface RangeSource {
  size: number;
  /** The bytes of `span` (inclusive); `signal` ends the stream with `cancelled`. */
  read(span: { start: number; end: number }, signal?: AbortSignal): Promise<Readable>;
}

/** Where the central directory is, from the end records. */
export interface ZipEnd {
  entries: number;
  cdOffset: number;
  cdSize: number;
}

export interface ZipEntry {
  name: string;
  size: number;
  compressed: number;
  is_dir: boolean;
  modified: string;
  encrypted: boolean;
  symlink: boolean;
  /** 0 stored, 8 deflate; anything else cannot be opened. */
  method: number;
  /** Offset of the entry's local header. */
  offset: number;
}

/** Archives with more entries are refused (a central directory bomb). */
export const MAX_ENTRIES = 100_000;
/** An entry's whole path (UTF-8 bytes) may not be longer: what a local disk accepts (PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

const EOCD_SIG = 0x06054b50;
const EOCD_LEN = 22;
const Z64_LOCATOR_SIG = 0x07064b50;
const Z64_LOCATOR_LEN = 20;
const Z64_END_SIG = 0x06064b50;
const Z64_END_LEN = 56;
const CENTRAL_SIG = 0x02014b50;
const CENTRAL_LEN = 46;
/** The end record, its longest comment and the ZIP64 records before it: the only place the end record can be. */
const TAIL_LEN = EOCD_LEN + 0xffff + Z64_LOCATOR_LEN + Z64_END_LEN;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;

/** `archive_invalid` with `details.reason` (and the entry when there is one). */
export function invalid(reason: string, entry?: string): AppError {
  const at = entry === undefined ? {} : { entry: shortName(entry) };
  return new AppError('archive_invalid', { reason, ...at }, { ...at, reason });
}

/** A name fit for an error body (a refused name can be 64 KiB long). */
const shortName = (name: string) => (name.length > 256 ? `${name.slice(0, 256)}…` : name);

/** Sources that ignore the signal (a buffer, a backup file) are stopped here between chunks. */
function stopIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new AppError('cancelled');
}

/** The bytes of `[start, start + len)` in one ranged read. Short → `archive_invalid` (truncated). */
export async function readBytes(source: RangeSource, start: number, len: number, signal?: AbortSignal): Promise<Buffer> {
  stopIfAborted(signal);
  if (len === 0) return Buffer.alloc(0);
  if (start + len > source.size) throw invalid('truncated');
  const chunks: Buffer[] = [];
  let got = 0;
  for await (const c of (await source.read({ start, end: start + len - 1 }, signal)) as AsyncIterable<Buffer>) {
    chunks.push(c);
    got += c.length;
  }
  if (got !== len) throw invalid('truncated');
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, got);
}

/**
 * Finds the central directory from the end records (ZIP64 included) in one
 * ranged read of the last 64 KiB or so (a second small one when a ZIP64 end
 * record sits before that). Not a ZIP → `archive_invalid` (`not_a_zip`);
 * more than `MAX_ENTRIES` → `archive_invalid` (`too_many_entries`), before
 * the directory is read.
 */
export async function readZipEnd(source: RangeSource, signal?: AbortSignal): Promise<ZipEnd> {
  if (source.size < EOCD_LEN) throw invalid('not_a_zip');
  const tailStart = Math.max(0, source.size - TAIL_LEN);
  const tail = await readBytes(source, tailStart, source.size - tailStart, signal);
  let at = -1;
  for (let i = tail.length - EOCD_LEN; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIG && i + EOCD_LEN + tail.readUInt16LE(i + 20) <= tail.length) {
      at = i;
      break;
    }
  }
  if (at < 0) throw invalid('not_a_zip');
  if (tail.readUInt16LE(at + 4) !== 0 || tail.readUInt16LE(at + 6) !== 0) throw invalid('multi_disk');
  let end: ZipEnd = { entries: tail.readUInt16LE(at + 10), cdSize: tail.readUInt32LE(at + 12), cdOffset: tail.readUInt32LE(at + 16) };
  const eocdAt = tailStart + at;
  if (end.entries === 0xffff || end.cdSize === 0xffffffff || end.cdOffset === 0xffffffff) {
    const loc = at - Z64_LOCATOR_LEN;
    if (loc >= 0 && tail.readUInt32LE(loc) === Z64_LOCATOR_SIG) end = await zip64End(source, tail, tailStart, Number(tail.readBigUInt64LE(loc + 8)), signal);
  }
  if (end.entries > MAX_ENTRIES)
    throw new AppError('archive_invalid', { reason: `more than ${MAX_ENTRIES} entries` }, { reason: 'too_many_entries', max: MAX_ENTRIES });
  // Every record is at least 46 bytes: a count the directory cannot hold is a lie, not a reason to wait for more.
  if (end.cdOffset + end.cdSize > eocdAt || end.cdSize < end.entries * CENTRAL_LEN) throw invalid('bad_directory');
  return end;
}

async function zip64End(source: RangeSource, tail: Buffer, tailStart: number, offset: number, signal?: AbortSignal): Promise<ZipEnd> {
  const inTail = offset >= tailStart && offset + Z64_END_LEN <= tailStart + tail.length;
  const rec = inTail ? tail.subarray(offset - tailStart, offset - tailStart + Z64_END_LEN) : await readBytes(source, offset, Z64_END_LEN, signal);
  if (rec.readUInt32LE(0) !== Z64_END_SIG) throw invalid('bad_zip64_end');
  if (rec.readUInt32LE(16) !== 0 || rec.readUInt32LE(20) !== 0) throw invalid('multi_disk');
  return { entries: safe(rec.readBigUInt64LE(32)), cdSize: safe(rec.readBigUInt64LE(40)), cdOffset: safe(rec.readBigUInt64LE(48)) };
}

const safe = (n: bigint): number => {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid('bad_zip64_end');
  return Number(n);
};

/**
 * Every record of the central directory, in one ranged read streamed and
 * parsed chunk by chunk (only a record cut by a chunk boundary is copied).
 * `signal` ends the read with `cancelled`. A record that is not one, a
 * directory shorter than its count, or a name longer than `MAX_PATH_BYTES`
 * → `archive_invalid`.
 */
export async function readDirectory(source: RangeSource, end: ZipEnd, signal?: AbortSignal): Promise<ZipEntry[]> {
  const out: ZipEntry[] = [];
  if (end.entries === 0) return out;
  const stream = await source.read({ start: end.cdOffset, end: end.cdOffset + end.cdSize - 1 }, signal);
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    stopIfAborted(signal);
    const buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    let pos = 0;
    for (let len = recordLength(buf, pos); len > 0 && out.length < end.entries; len = recordLength(buf, pos)) {
      out.push(parseRecord(buf.subarray(pos, pos + len)));
      pos += len;
    }
    if (out.length === end.entries) break;
    rest = buf.subarray(pos);
  }
  if (out.length !== end.entries) throw invalid('bad_directory');
  return out;
}

/** The length of the record at `pos`, or 0 when the buffer does not hold all of it yet. */
function recordLength(buf: Buffer, pos: number): number {
  if (buf.length - pos < CENTRAL_LEN) return 0;
  if (buf.readUInt32LE(pos) !== CENTRAL_SIG) throw invalid('bad_directory');
  const nameLen = buf.readUInt16LE(pos + 28);
  if (nameLen > MAX_PATH_BYTES) throw invalid('path_too_long', buf.subarray(pos + CENTRAL_LEN, Math.min(buf.length, pos + CENTRAL_LEN + 256)).toString('utf8'));
  const len = CENTRAL_LEN + nameLen + buf.readUInt16LE(pos + 30) + buf.readUInt16LE(pos + 32);
  return buf.length - pos < len ? 0 : len;
}

function parseRecord(r: Buffer): ZipEntry {
  const flags = r.readUInt16LE(8);
  const nameLen = r.readUInt16LE(28);
  const extraLen = r.readUInt16LE(30);
  const name = r.toString(flags & FLAG_UTF8 ? 'utf8' : 'latin1', CENTRAL_LEN, CENTRAL_LEN + nameLen);
  if (r.readUInt16LE(34) !== 0 && r.readUInt16LE(34) !== 0xffff) throw invalid('multi_disk', name);
  const e: ZipEntry = {
    name,
    size: r.readUInt32LE(24),
    compressed: r.readUInt32LE(20),
    is_dir: name.endsWith('/'),
    modified: '',
    encrypted: (flags & FLAG_ENCRYPTED) !== 0,
    symlink: ((r.readUInt32LE(38) >>> 16) & S_IFMT) === S_IFLNK,
    method: r.readUInt16LE(10),
    offset: r.readUInt32LE(42),
  };
  let mtime: Date | null = null;
  const extra = r.subarray(CENTRAL_LEN + nameLen, CENTRAL_LEN + nameLen + extraLen);
  for (let i = 0; i + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(i);
    const data = extra.subarray(i + 4, i + 4 + extra.readUInt16LE(i + 2));
    if (id === 0x0001) zip64Fields(e, data);
    else if (!mtime) mtime = extraTime(id, data);
    i += 4 + data.length;
  }
  e.modified = (mtime ?? dosTime(r.readUInt16LE(14), r.readUInt16LE(12))).toISOString();
  return e;
}

/** The ZIP64 extra field holds, in this order, each value whose 32-bit field is saturated. */
function zip64Fields(e: ZipEntry, data: Buffer): void {
  let at = 0;
  const next = () => {
    if (at + 8 > data.length) throw invalid('bad_zip64_field', e.name);
    return safe(data.readBigUInt64LE((at += 8) - 8));
  };
  if (e.size === 0xffffffff) e.size = next();
  if (e.compressed === 0xffffffff) e.compressed = next();
  if (e.offset === 0xffffffff) e.offset = next();
}

/** The modification time of an Info-ZIP `UT` or NTFS extra field (what yauzl and unzip prefer to the DOS time). */
function extraTime(id: number, d: Buffer): Date | null {
  if (id === 0x5455 && d.length >= 5 && d[0] & 1) return new Date(d.readInt32LE(1) * 1000);
  if (id === 0x000a && d.length === 32 && d.readUInt16LE(4) === 1 && d.readUInt16LE(6) === 24) {
    return new Date((d.readUInt32LE(8) + 4294967296 * d.readInt32LE(12)) / 10000 - 11644473600000);
  }
  return null;
}

/** A DOS date and time, read in the server's time zone (as unzip shows it). */
function dosTime(date: number, time: number): Date {
  return new Date(((date >> 9) & 0x7f) + 1980, ((date >> 5) & 0xf) - 1, date & 0x1f, (time >> 11) & 0x1f, (time >> 5) & 0x3f, (time & 0x1f) * 2);
}
