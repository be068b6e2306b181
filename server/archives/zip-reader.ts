/**
 * Reading ZIP files from any storage: the central directory is read through
 * ranged reads (a local storage opens the file in place), so listing a large
 * archive fetches a few kilobytes. Entry names are decoded here and judged by
 * `entryProblem` before anything is written.
 */
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { AppError } from '../errors';

/** A file read by byte ranges (the file service's OpenFile). */
export interface RangeSource {
  size: number;
  read(span: { start: number; end: number }): Promise<Readable>;
}

export interface ZipEntry {
  name: string;
  size: number;
  compressed: number;
  is_dir: boolean;
  modified: string;
  encrypted: boolean;
  symlink: boolean;
  raw: yauzl.Entry;
}

export interface OpenZip {
  entries: ZipEntry[];
  /**
   * The entry's bytes, decompressed. Every failure of the archive's own bytes
   * (broken deflate data, more or fewer bytes than the entry declares) fails
   * the stream with `archive_invalid`; no byte beyond the declared size is
   * ever emitted.
   */
  open(e: ZipEntry): Promise<Readable>;
  close(): void;
}

/** Archives with more entries are refused (a central directory bomb). */
export const MAX_ENTRIES = 100_000;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;

class RangeReader extends yauzl.RandomAccessReader {
  constructor(private source: RangeSource) {
    super();
  }
  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    if (end <= start) return out.end(), out;
    this.source.read({ start, end: end - 1 }).then(
      (s) => pipeline(s, out).catch((e) => out.destroy(e)),
      (e) => out.destroy(e),
    );
    return out;
  }
}

/**
 * Opens a ZIP read by ranges (the central directory costs a few kilobytes)
 * and reads its whole central directory. Not a ZIP (or truncated) → `archive_invalid`.
 */
export async function openZip(source: RangeSource): Promise<OpenZip> {
  const opts = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true };
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(new RangeReader(source), source.size, opts);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw new AppError('archive_invalid', { reason: (e as Error).message }, { reason: (e as Error).message });
  }
  try {
    if (zip.entryCount > MAX_ENTRIES) throw new AppError('archive_invalid', { reason: `more than ${MAX_ENTRIES} entries` }, { reason: 'too_many_entries', max: MAX_ENTRIES });
    const entries = await readAll(zip);
    return {
      entries,
      open: async (e) => {
        try {
          return Readable.from(checked(await zip.openReadStreamPromise(e.raw), e), { objectMode: false });
        } catch (err) {
          throw entryInvalid(e, err);
        }
      },
      close: () => zip.close(),
    };
  } catch (e) {
    zip.close();
    throw e;
  }
}

const entryInvalid = (e: ZipEntry, err: unknown) =>
  err instanceof AppError ? err : new AppError('archive_invalid', { reason: (err as Error).message }, { entry: e.name, reason: (err as Error).message });

/**
 * The bytes of yauzl's entry stream, cut at the declared size. The loop is the
 * stream's only consumer, so its errors (yauzl's byte-count checks, zlib's)
 * are always handled here and leave as `archive_invalid`; destroying the
 * returned stream ends the loop, which destroys yauzl's stream.
 */
async function* checked(raw: Readable, e: ZipEntry): AsyncGenerator<Buffer> {
  let seen = 0;
  try {
    for await (const chunk of raw as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (seen > e.size) throw new AppError('archive_invalid', { reason: 'size_mismatch' }, { entry: e.name, reason: 'size_mismatch' });
      yield chunk;
    }
  } catch (err) {
    throw entryInvalid(e, err);
  }
  if (seen !== e.size) throw new AppError('archive_invalid', { reason: 'size_mismatch' }, { entry: e.name, reason: 'size_mismatch' });
}

function readAll(zip: yauzl.ZipFile): Promise<ZipEntry[]> {
  const out: ZipEntry[] = [];
  return new Promise((resolve, reject) => {
    zip.on('entry', (raw: yauzl.Entry) => {
      const nameBuf = raw.fileName as unknown as Buffer;
      const name = nameBuf.toString(raw.generalPurposeBitFlag & FLAG_UTF8 ? 'utf8' : 'latin1');
      const mode = (raw.externalFileAttributes >>> 16) & S_IFMT;
      out.push({
        name,
        size: raw.uncompressedSize,
        compressed: raw.compressedSize,
        is_dir: name.endsWith('/'),
        modified: raw.getLastModDate().toISOString(),
        encrypted: (raw.generalPurposeBitFlag & FLAG_ENCRYPTED) !== 0,
        symlink: mode === S_IFLNK,
        raw,
      });
      zip.readEntry();
    });
    zip.once('end', () => resolve(out));
    zip.once('error', (e: Error) => reject(new AppError('archive_invalid', { reason: e.message }, { reason: e.message })));
    zip.readEntry();
  });
}

/**
 * Why an entry name must not be materialised (zip slip), or null: absolute
 * paths, drive letters, backslashes, `..` segments and NUL are refused.
 */
export function entryProblem(name: string): string | null {
  if (name.includes('\0')) return 'nul';
  if (name.includes('\\')) return 'backslash';
  if (name.startsWith('/')) return 'absolute';
  if (/^[a-zA-Z]:/.test(name)) return 'drive_letter';
  if (name.split('/').some((s) => s === '..')) return 'traversal';
  return null;
}
