/**
 * A lean streaming ZIP writer: one pass, no temp files, no seeking. Each file
 * is written as a local header, its data (stored or raw deflate) and a data
 * descriptor carrying the CRC and sizes; the central directory follows at
 * `finish()`. ZIP64 records are written when an entry, an offset or the entry
 * count outgrows the classic fields. Writes honour the output's backpressure
 * and stop at the AbortSignal.
 *
 *   const zip = new ZipWriter(res);
 *   await zip.addDir('photos/');
 *   await zip.addFile('photos/a.jpg', stream, { size, mtime, compress: false });
 *   await zip.finish();
 *
 * A build that journals its progress (lib/zip-build.ts) takes each entry's
 * central-directory record from `onEntry` and, after a crash, goes on with
 * `ZipWriter.resume(out, { offset, entries })`: the output continues at
 * `offset` and `finish()` writes the journalled entries' records first.
 */
import { once } from 'node:events';
import { crc32, createDeflateRaw } from 'node:zlib';
import type { Readable, Writable } from 'node:stream';
import { AppError } from '../errors';

export interface ZipFileOptions {
  /** Declared size; when absent or near 4 GiB the entry gets ZIP64 sizes. */
  size?: number;
  /** Modification time (Date or epoch ms). */
  mtime: Date | number;
  /** Raw deflate when true, stored when false. */
  compress: boolean;
  /** Unix permission bits (default 0644 for files). */
  mode?: number;
}

export interface ZipWriterOptions {
  signal?: AbortSignal;
  /** Deflate level for compressed entries (default 1: the speed end, as `zip -1`). */
  level?: number;
  /** Called with each entry's central-directory record once all its bytes were handed to the output. */
  onEntry?: (e: ZipEntryRecord) => void;
}

/** One entry's central-directory data, as plain JSON-able values (what a resumed writer needs of it). */
export interface ZipEntryRecord {
  name: string;
  method: 0 | 8;
  time: number;
  date: number;
  crc: number;
  csize: number;
  usize: number;
  /** Offset of the entry's local header. */
  offset: number;
  zip64: boolean;
  external: number;
  dir: boolean;
}

/** Where a resumed writer goes on: the archive's length so far and the entries written into it. */
export interface ZipWriterState {
  offset: number;
  entries: ZipEntryRecord[];
}

/** An entry as the writer keeps it: its name already encoded. */
type Record = Omit<ZipEntryRecord, 'name'> & { name: Buffer };

const U32 = 0xffffffff;
const U16 = 0xffff;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
const MADE_BY_UNIX = 3 << 8;
/** Declared sizes above this get ZIP64 records up front (deflate can grow incompressible data slightly). */
const ZIP64_THRESHOLD = U32 - 16 * 1024 * 1024;

export class ZipWriter {
  private records: Record[] = [];
  private offset = 0;
  /** Calls run one after another in call order, so an un-awaited addDir cannot interleave with the next entry. */
  private tail: Promise<unknown> = Promise.resolve();
  private finished = false;
  private readonly level: number;

  constructor(
    private out: Writable,
    private o: ZipWriterOptions = {},
  ) {
    this.level = o.level ?? 1;
  }

  /**
   * A writer that goes on with an archive a crash cut short: `out` continues
   * the file at `state.offset` (the caller truncated it there), and the
   * entries already in it are listed in the central directory `finish()`
   * writes. The records must be this writer's own (from `onEntry`).
   */
  static resume(out: Writable, state: ZipWriterState, o: ZipWriterOptions = {}): ZipWriter {
    const w = new ZipWriter(out, o);
    let end = 0;
    for (const e of state.entries) {
      if (!Number.isSafeInteger(e.offset) || e.offset < end || e.offset >= state.offset) throw new Error(`a resumed entry lies outside the archive: ${e.name}`);
      end = e.offset;
      w.records.push({ ...e, name: Buffer.from(e.name, 'utf8') });
    }
    w.offset = state.offset;
    return w;
  }

  /** Entries written so far. */
  get entryCount(): number {
    return this.records.length;
  }

  /** Bytes written so far. */
  get bytesWritten(): number {
    return this.offset;
  }

  /** Adds a folder entry (`name` gets a trailing slash). */
  addDir(name: string, mtime: Date | number = Date.now()): Promise<void> {
    return this.serial(async () => {
      const rec = this.record(name.endsWith('/') ? name : name + '/', mtime, 0, false);
      rec.dir = true;
      rec.external = ((0o40755 << 16) | 0x10) >>> 0;
      await this.write(localHeader(rec, 0));
      this.push(rec);
    });
  }

  /**
   * Streams one file into the archive. Calls queue up in order; a failed call
   * (or the signal firing: `cancelled`) leaves the archive unusable and every
   * later call rejects too.
   */
  addFile(name: string, body: Readable, opts: ZipFileOptions): Promise<void> {
    return this.serial(() => this.fileEntry(name, body, opts)).catch((e) => {
      body.destroy();
      throw e;
    });
  }

  private async fileEntry(name: string, body: Readable, opts: ZipFileOptions): Promise<void> {
    const zip64 = opts.size === undefined || opts.size >= ZIP64_THRESHOLD;
    const rec = this.record(name, opts.mtime, opts.compress ? 8 : 0, zip64);
    rec.external = ((0o100000 | (opts.mode ?? 0o644)) << 16) >>> 0;
    await this.write(localHeader(rec, FLAG_DESCRIPTOR));
    if (opts.compress) await this.deflated(rec, body);
    else await this.stored(rec, body);
    if (!zip64 && (rec.csize >= U32 || rec.usize >= U32)) throw new Error(`${name}: grew past 4 GiB beyond its declared size`);
    await this.write(descriptor(rec));
    this.push(rec);
  }

  private push(rec: Record): void {
    this.records.push(rec);
    this.o.onEntry?.({ ...rec, name: rec.name.toString('utf8') });
  }

  /** Writes the central directory and the end records, then ends the output. Returns the archive's size. */
  finish(): Promise<number> {
    const done = this.serial(() => this.trailer());
    this.finished = true;
    return done;
  }

  private async trailer(): Promise<number> {
    const cdStart = this.offset;
    for (const r of this.records) await this.write(centralHeader(r));
    const cdSize = this.offset - cdStart;
    const count = this.records.length;
    if (count >= U16 || cdStart >= U32 || cdSize >= U32) {
      const z64 = this.offset;
      const rec = Buffer.alloc(56);
      rec.writeUInt32LE(0x06064b50, 0);
      rec.writeBigUInt64LE(44n, 4);
      rec.writeUInt16LE(MADE_BY_UNIX | 45, 12);
      rec.writeUInt16LE(45, 14);
      rec.writeBigUInt64LE(BigInt(count), 24);
      rec.writeBigUInt64LE(BigInt(count), 32);
      rec.writeBigUInt64LE(BigInt(cdSize), 40);
      rec.writeBigUInt64LE(BigInt(cdStart), 48);
      const loc = Buffer.alloc(20);
      loc.writeUInt32LE(0x07064b50, 0);
      loc.writeBigUInt64LE(BigInt(z64), 8);
      loc.writeUInt32LE(1, 16);
      await this.write(Buffer.concat([rec, loc]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(Math.min(count, U16), 8);
    end.writeUInt16LE(Math.min(count, U16), 10);
    end.writeUInt32LE(Math.min(cdSize, U32), 12);
    end.writeUInt32LE(Math.min(cdStart, U32), 16);
    await this.write(end);
    await new Promise<void>((resolve, reject) => {
      this.out.once('error', reject);
      this.out.end(() => resolve());
    });
    return this.offset;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (this.finished) return Promise.reject(new Error('the zip is finished'));
    const run = this.tail.then(() => {
      if (this.o.signal?.aborted) throw new AppError('cancelled');
      return fn();
    });
    // A failure poisons the archive: every later call rejects with the same error.
    this.tail = run;
    run.catch(() => undefined); // a caller that does not await (addDir) must not crash the process
    return run;
  }

  private record(name: string, mtime: Date | number, method: 0 | 8, zip64: boolean): Record {
    if (name === '' || name.startsWith('/') || name.includes('\\') || name.split('/').includes('..')) throw new Error(`not a relative entry name: ${name}`);
    const d = new Date(mtime);
    const year = Math.max(1980, d.getFullYear());
    return {
      name: Buffer.from(name, 'utf8'),
      method,
      crc: 0,
      csize: 0,
      usize: 0,
      offset: this.offset,
      zip64,
      external: 0,
      dir: false,
      time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
      date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
    };
  }

  private async write(buf: Buffer): Promise<void> {
    this.offset += buf.length;
    if (this.out.write(buf)) return;
    if (this.out.destroyed) throw new Error('the zip output was closed');
    const ac = new AbortController();
    const gone = () => ac.abort();
    this.out.once('close', gone);
    try {
      await once(this.out, 'drain', { signal: this.o.signal ? AbortSignal.any([this.o.signal, ac.signal]) : ac.signal });
    } catch {
      this.checkAbort();
      throw new Error('the zip output was closed');
    } finally {
      this.out.off('close', gone);
    }
  }

  private checkAbort(): void {
    if (this.o.signal?.aborted) throw new AppError('cancelled');
  }

  private async stored(rec: Record, body: Readable): Promise<void> {
    for await (const chunk of body) {
      this.checkAbort();
      rec.crc = crc32(chunk as Buffer, rec.crc);
      rec.usize += (chunk as Buffer).length;
      await this.write(chunk as Buffer);
    }
    rec.csize = rec.usize;
  }

  private async deflated(rec: Record, body: Readable): Promise<void> {
    const deflate = createDeflateRaw({ level: this.level });
    const feed = (async () => {
      try {
        for await (const chunk of body) {
          this.checkAbort();
          rec.crc = crc32(chunk as Buffer, rec.crc);
          rec.usize += (chunk as Buffer).length;
          if (!deflate.write(chunk)) await once(deflate, 'drain');
        }
        deflate.end();
      } catch (e) {
        deflate.destroy(e as Error);
        throw e;
      }
    })();
    const drain = (async () => {
      for await (const c of deflate) {
        rec.csize += (c as Buffer).length;
        await this.write(c as Buffer);
      }
    })();
    await Promise.all([feed, drain]).catch(async (e) => {
      deflate.destroy();
      await Promise.allSettled([feed, drain]);
      throw e;
    });
  }
}

function localHeader(r: Record, flags: number): Buffer {
  const extra = r.zip64 ? zip64Extra([0, 0]) : Buffer.alloc(0);
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(r.zip64 ? 45 : 20, 4);
  h.writeUInt16LE(flags | FLAG_UTF8, 6);
  h.writeUInt16LE(r.method, 8);
  h.writeUInt16LE(r.time, 10);
  h.writeUInt16LE(r.date, 12);
  // crc and sizes follow in the data descriptor (zero here; 0xFFFFFFFF sizes with a ZIP64 extra)
  if (r.zip64) {
    h.writeUInt32LE(U32, 18);
    h.writeUInt32LE(U32, 22);
  }
  h.writeUInt16LE(r.name.length, 26);
  h.writeUInt16LE(extra.length, 28);
  return Buffer.concat([h, r.name, extra]);
}

function descriptor(r: Record): Buffer {
  const b = Buffer.alloc(r.zip64 ? 24 : 16);
  b.writeUInt32LE(0x08074b50, 0);
  b.writeUInt32LE(r.crc >>> 0, 4);
  if (r.zip64) {
    b.writeBigUInt64LE(BigInt(r.csize), 8);
    b.writeBigUInt64LE(BigInt(r.usize), 16);
  } else {
    b.writeUInt32LE(r.csize, 8);
    b.writeUInt32LE(r.usize, 12);
  }
  return b;
}

function centralHeader(r: Record): Buffer {
  const big: number[] = [];
  const usize = r.zip64 || r.usize >= U32 ? (big.push(r.usize), U32) : r.usize;
  const csize = r.zip64 || r.csize >= U32 ? (big.push(r.csize), U32) : r.csize;
  const offset = r.offset >= U32 ? (big.push(r.offset), U32) : r.offset;
  const extra = big.length ? zip64Extra(big) : Buffer.alloc(0);
  const needed = big.length ? 45 : 20;
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE(MADE_BY_UNIX | needed, 4);
  h.writeUInt16LE(needed, 6);
  h.writeUInt16LE((r.dir ? 0 : FLAG_DESCRIPTOR) | FLAG_UTF8, 8);
  h.writeUInt16LE(r.method, 10);
  h.writeUInt16LE(r.time, 12);
  h.writeUInt16LE(r.date, 14);
  h.writeUInt32LE(r.crc >>> 0, 16);
  h.writeUInt32LE(csize, 20);
  h.writeUInt32LE(usize, 24);
  h.writeUInt16LE(r.name.length, 28);
  h.writeUInt16LE(extra.length, 30);
  h.writeUInt32LE(r.external, 38);
  h.writeUInt32LE(offset, 42);
  return Buffer.concat([h, r.name, extra]);
}

/** The ZIP64 extended information extra field (id 0x0001) with the given 8-byte values in spec order. */
function zip64Extra(values: number[]): Buffer {
  const b = Buffer.alloc(4 + values.length * 8);
  b.writeUInt16LE(0x0001, 0);
  b.writeUInt16LE(values.length * 8, 2);
  values.forEach((v, i) => b.writeBigUInt64LE(BigInt(v), 4 + i * 8));
  return b;
}
