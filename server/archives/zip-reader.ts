/**
 * Reading ZIP files from any storage: the central directory comes in large
 * ranged reads (zip-directory.ts), entry data through a 1 MiB block cache
 * (entries smaller than a block cost no read of their own once their
 * neighbour's block is in) or one ranged read each for larger ones. Entry
 * names are decoded there and judged by `entryProblem` before anything is
 * written.
 */
import { Readable, pipeline } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { AppError } from '../errors';
import { invalid, readBytes, readDirectory, readZipEnd, type RangeSource, type ZipEnd, type ZipEntry } from './zip-directory';

export { MAX_ENTRIES, MAX_PATH_BYTES, readZipEnd, type RangeSource, type ZipEnd, type ZipEntry } from './zip-directory';

export interface OpenZip {
  entries: ZipEntry[];
  /**
   * The entry's bytes, decompressed. Every failure of the archive's own bytes
   * (broken deflate data, more or fewer bytes than the entry declares) fails
   * the stream with `archive_invalid`; no byte beyond the declared size is
   * ever emitted. An encrypted entry → `archive_encrypted`.
   */
  open(e: ZipEntry): Promise<Readable>;
  /** Drops the cached block (nothing else is held open). */
  close(): void;
}

const LOCAL_SIG = 0x04034b50;
const LOCAL_LEN = 30;
/** Entry data is read in blocks of this size (small entries share one read). */
const BLOCK = 1024 * 1024;

/**
 * Opens a ZIP read by ranges and reads its whole central directory (`end`:
 * the end records when the caller has read them already). Not a ZIP (or
 * truncated) → `archive_invalid`; `signal` ends the read with `cancelled`.
 */
export async function openZip(source: RangeSource, o: { signal?: AbortSignal; end?: ZipEnd } = {}): Promise<OpenZip> {
  const entries = await readDirectory(source, o.end ?? (await readZipEnd(source, o.signal)), o.signal);
  let blocks: BlockReader | null = new BlockReader(source, o.signal);
  return {
    entries,
    open: async (e) => {
      if (!blocks) throw new Error('zip closed');
      try {
        return Readable.from(checked(await entryData(source, blocks, e), e), { objectMode: false });
      } catch (err) {
        throw entryInvalid(e, err);
      }
    },
    close: () => {
      blocks = null;
    },
  };
}

/** The entry's compressed bytes behind its local header, inflated when deflated. */
async function entryData(source: RangeSource, blocks: BlockReader, e: ZipEntry): Promise<Readable> {
  if (e.encrypted) throw new AppError('archive_encrypted', { entry: e.name }, { entry: e.name });
  if (e.method !== 0 && e.method !== 8) throw invalid('unsupported_method', e.name);
  if (e.method === 0 && e.compressed !== e.size) throw invalid('size_mismatch', e.name);
  const head = await blocks.bytes(e.offset, LOCAL_LEN);
  if (head.readUInt32LE(0) !== LOCAL_SIG) throw invalid('bad_local_header', e.name);
  const start = e.offset + LOCAL_LEN + head.readUInt16LE(26) + head.readUInt16LE(28);
  if (start + e.compressed > source.size) throw invalid('truncated', e.name);
  const raw =
    e.compressed <= BLOCK
      ? Readable.from([await blocks.bytes(start, e.compressed)])
      : await source.read({ start, end: start + e.compressed - 1 }, blocks.signal);
  return e.method === 8 ? pipeline(raw, createInflateRaw(), () => undefined) : raw;
}

/** Serves byte spans from one cached block, fetching a new block (one ranged read) on a miss. */
class BlockReader {
  private block: Buffer = Buffer.alloc(0);
  private at = 0;
  constructor(
    private source: RangeSource,
    readonly signal?: AbortSignal,
  ) {}

  async bytes(start: number, len: number): Promise<Buffer> {
    if (start < this.at || start + len > this.at + this.block.length) {
      this.block = await readBytes(this.source, start, Math.max(len, Math.min(BLOCK, this.source.size - start)), this.signal);
      this.at = start;
    }
    return this.block.subarray(start - this.at, start - this.at + len);
  }
}

const entryInvalid = (e: ZipEntry, err: unknown) =>
  err instanceof AppError ? err : new AppError('archive_invalid', { reason: (err as Error).message }, { entry: e.name, reason: (err as Error).message });

/**
 * The entry's bytes, cut at the declared size. The loop is the stream's only
 * consumer, so its errors (zlib's, a short read) are always handled here and
 * leave as `archive_invalid`; destroying the returned stream ends the loop,
 * which destroys the inflater and the read under it.
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
