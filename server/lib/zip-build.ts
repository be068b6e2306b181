/**
 * A ZIP built into a local file that survives `kill -9`: the build commits
 * its progress now and then (a checkpoint) and a later build of the same
 * plan goes on from the last checkpoint instead of from byte 0.
 *
 * A checkpoint is: every byte written so far reached the file (no write in
 * flight), `fdatasync`, then the store records the committed length and the
 * central-directory records of the entries committed since the last one. The
 * store may lag the file (a crash loses the entries after the checkpoint;
 * they are written again) but never leads it: it never claims a byte that is
 * not durable. Checkpoints are taken after an entry once 8 MiB, 256 entries
 * or 2 s passed since the last one (`CommitPolicy`): one fdatasync and one
 * journal write each, so a folder of small files does not pay one per file.
 *
 * Resuming (`ZipFileBuild.open` with the plan's entry keys): the committed
 * entries are kept as far as they match the plan, key by key (a key names
 * the entry and its source's size and mtime, so a source changed since it
 * was written does not match); the file is cut at the first entry that does
 * not match (or at the committed length) and the writer goes on there. The
 * archive is then byte for byte what a build from zero of the plan would
 * write. A temp file that is gone or shorter than the store says starts over.
 */
import { close, fdatasync, ftruncate, open, write } from 'node:fs';
import { appendFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Writable, type Readable } from 'node:stream';
import { ZipWriter, type ZipEntryRecord, type ZipFileOptions } from './zip-writer';

const openP = promisify(open);
const syncP = promisify(fdatasync);
const truncP = promisify(ftruncate);

/** A committed entry: its central-directory record and the key of the plan item it came from. */
export interface ZipBuildEntry extends ZipEntryRecord {
  key: string;
}

export interface ZipCheckpoint {
  /** Bytes of the temp file that are durable and hold `entries`. */
  length: number;
  entries: ZipBuildEntry[];
}

/** Where a build keeps its checkpoints (an op's journal, or a sidecar file beside the temp). */
export interface ZipBuildStore {
  /** The last checkpoint recorded, or null. */
  load(): ZipCheckpoint | null | Promise<ZipCheckpoint | null>;
  /**
   * Records that the first `length` bytes are durable and hold `before + added.length` entries,
   * `added` being those after the first `before`. False when it cannot be recorded right now
   * (a busy database): the build keeps the entries and records them with the next checkpoint.
   */
  commit(length: number, before: number, added: ZipBuildEntry[]): boolean | Promise<boolean>;
  /** Forgets every checkpoint (the file starts over). Throws when it cannot. */
  reset(): void | Promise<void>;
}

export interface CommitPolicy {
  bytes: number;
  entries: number;
  ms: number;
}

export const DEFAULT_POLICY: CommitPolicy = { bytes: 8 * 1024 * 1024, entries: 256, ms: 2000 };

export interface ZipBuildOptions {
  signal?: AbortSignal;
  level?: number;
  /** When to checkpoint; null: never (no journal, no fdatasync: the build restarts after a crash). */
  policy?: CommitPolicy | null;
  /** Puts a stream between the writer and the file (a tee to a live download); ending it must end the file. */
  wrap?: (file: Writable) => Writable;
}

/** The key of a plan item: its entry name, type and its source's size and mtime. */
export const entryKey = (name: string, type: 'file' | 'dir', size: number, mtime: number): string =>
  `${type === 'dir' ? 'd' : 'f'}:${size}:${Math.trunc(mtime)}:${name}`;

export class ZipFileBuild {
  private pending: ZipBuildEntry[] = [];
  private committed: number;
  private nextKey = '';
  private lastBytes: number;
  private lastAt = Date.now();
  private closed = false;
  /** Checkpoints taken by this build and the time spent waiting for their `fdatasync` and journal writes. */
  readonly stats = { checkpoints: 0, syncMs: 0, journalMs: 0 };

  private constructor(
    readonly temp: string,
    private store: ZipBuildStore | null,
    private sink: FdSink,
    private out: Writable,
    readonly zip: ZipWriter,
    /** Entries and bytes kept from an earlier build (0 when it started from zero). */
    readonly resumed: { entries: number; bytes: number },
    private policy: CommitPolicy | null,
  ) {
    this.committed = resumed.entries;
    this.lastBytes = resumed.bytes;
  }

  /**
   * Opens the build of a plan whose items have `keys` (in order), going on
   * from the store's last checkpoint where it still fits. `store` null (or
   * `policy` null): a plain build from zero that keeps no checkpoints.
   */
  static async open(temp: string, store: ZipBuildStore | null, keys: readonly string[], o: ZipBuildOptions = {}): Promise<ZipFileBuild> {
    const policy = o.policy === undefined ? DEFAULT_POLICY : o.policy;
    const journal = policy ? store : null;
    const cp = (await journal?.load()) ?? null;
    let kept: ZipBuildEntry[] = [];
    let length = 0;
    if (cp && cp.length > 0) {
      const size = (await stat(temp).catch(() => null))?.size ?? -1;
      if (size >= cp.length) {
        let k = 0;
        while (k < cp.entries.length && k < keys.length && cp.entries[k].key === keys[k]) k++;
        kept = cp.entries.slice(0, k);
        length = k < cp.entries.length ? cp.entries[k].offset : cp.length;
      }
    }
    let fd: number;
    if (kept.length === 0) {
      // The store must stop claiming the old bytes before any new byte is written over them.
      if (cp) await journal!.reset();
      fd = await openP(temp, 'w');
      length = 0;
    } else {
      if (kept.length < cp!.entries.length && !(await journal!.commit(length, 0, kept))) throw new Error('the ZIP build journal cannot be written now');
      fd = await openP(temp, 'r+');
      await truncP(fd, length);
    }
    const sink = new FdSink(fd, length);
    const out = o.wrap ? o.wrap(sink) : sink;
    let build: ZipFileBuild | undefined;
    const onEntry = (e: ZipEntryRecord) => build!.pending.push({ ...e, key: build!.nextKey });
    const zip = kept.length
      ? ZipWriter.resume(out, { offset: length, entries: kept }, { signal: o.signal, level: o.level, onEntry })
      : new ZipWriter(out, { signal: o.signal, level: o.level, onEntry });
    build = new ZipFileBuild(temp, journal, sink, out, zip, { entries: kept.length, bytes: length }, policy);
    return build;
  }

  /** Entries in the archive so far. */
  get entries(): number {
    return this.zip.entryCount;
  }

  get bytesWritten(): number {
    return this.zip.bytesWritten;
  }

  async addDir(key: string, name: string, mtime: Date | number): Promise<void> {
    this.nextKey = key;
    await this.zip.addDir(name, mtime);
    await this.maybeCommit();
  }

  async addFile(key: string, name: string, body: Readable, opts: ZipFileOptions): Promise<void> {
    this.nextKey = key;
    await this.zip.addFile(name, body, opts);
    await this.maybeCommit();
  }

  /** Writes the central directory, makes the whole file durable and closes it. Returns the archive's size. */
  async finish(): Promise<number> {
    const size = await this.zip.finish();
    this.closed = true;
    return size;
  }

  /** Closes the file and keeps it (the build resumes later). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.out !== this.sink) this.out.destroy();
    await new Promise<void>((resolve) => {
      if (this.sink.destroyed) return resolve();
      this.sink.once('close', () => resolve());
      this.sink.destroy();
    });
  }

  /** Closes and deletes the file and forgets the checkpoints (the op failed or was cancelled). */
  async discard(): Promise<void> {
    await this.close();
    await rm(this.temp, { force: true });
    try {
      await this.store?.reset();
    } catch {
      // the op's journal goes with the op anyway
    }
  }

  /** A checkpoint now: the bytes so far are durable, then recorded with the entries they hold. */
  async checkpoint(): Promise<void> {
    if (!this.store) return;
    if (this.out !== this.sink) await flushed(this.out);
    await flushed(this.sink);
    const t0 = performance.now();
    await syncP(this.sink.fd);
    const t1 = performance.now();
    const length = this.zip.bytesWritten;
    const added = this.pending;
    if (await this.store.commit(length, this.committed, added)) {
      this.committed += added.length;
      this.pending = this.pending.slice(added.length);
    }
    this.stats.checkpoints++;
    this.stats.syncMs += t1 - t0;
    this.stats.journalMs += performance.now() - t1;
    this.lastBytes = length;
    this.lastAt = Date.now();
  }

  private async maybeCommit(): Promise<void> {
    const p = this.policy;
    if (!p || !this.store || this.pending.length === 0) return;
    if (this.pending.length >= p.entries || this.zip.bytesWritten - this.lastBytes >= p.bytes || Date.now() - this.lastAt >= p.ms) await this.checkpoint();
  }
}

/** Resolves once every byte written to `w` before the call was processed by it (an empty write queues behind them). */
function flushed(w: Writable): Promise<void> {
  return new Promise((resolve, reject) => w.write(Buffer.alloc(0), (e) => (e ? reject(e) : resolve())));
}

/**
 * The temp file as a stream: positioned writes on one descriptor, so a
 * resumed file goes on at its committed length; an empty write's callback
 * says every byte before it reached the file; the end makes it durable.
 */
class FdSink extends Writable {
  constructor(
    readonly fd: number,
    private pos: number,
  ) {
    super({ highWaterMark: 1 << 20 });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    if (chunk.length === 0) return cb();
    let off = 0;
    const next = (): void =>
      write(this.fd, chunk, off, chunk.length - off, this.pos, (err, n) => {
        if (err) return cb(err);
        off += n;
        this.pos += n;
        if (off < chunk.length) return next();
        cb();
      });
    next();
  }

  override _final(cb: (e?: Error | null) => void): void {
    fdatasync(this.fd, (e) => cb(e));
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    close(this.fd, () => cb(err));
  }
}

/** Parses a stored checkpoint's entries, checked like input (it comes back from disk or the database). */
export function validEntries(v: unknown): v is ZipBuildEntry[] {
  return (
    Array.isArray(v) &&
    v.every(
      (e) =>
        e &&
        typeof e === 'object' &&
        typeof e.key === 'string' &&
        typeof e.name === 'string' &&
        (e.method === 0 || e.method === 8) &&
        [e.time, e.date, e.crc, e.csize, e.usize, e.offset, e.external].every((n) => Number.isSafeInteger(n) && n >= 0) &&
        typeof e.zip64 === 'boolean' &&
        typeof e.dir === 'boolean',
    )
  );
}

/**
 * Checkpoints in a file beside the temp (`<temp>.idx`), for builds that are
 * not ops (share folder ZIPs): one JSON line per checkpoint with the entries
 * it added. A line cut by a crash, and anything after it, is ignored.
 */
export class SidecarStore implements ZipBuildStore {
  constructor(readonly file: string) {}

  load(): ZipCheckpoint | null {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return null;
    }
    const entries: ZipBuildEntry[] = [];
    let length = -1;
    for (const line of text.split('\n')) {
      if (!line) break;
      try {
        const v = JSON.parse(line) as { length: number; before: number; entries: unknown };
        if (!Number.isSafeInteger(v.length) || v.before !== entries.length || !validEntries(v.entries)) break;
        for (const e of v.entries) entries.push(e);
        length = v.length;
      } catch {
        break;
      }
    }
    return length < 0 ? null : { length, entries };
  }

  commit(length: number, before: number, added: ZipBuildEntry[]): boolean {
    const line = JSON.stringify({ length, before, entries: added }) + '\n';
    if (before === 0) {
      writeFileSync(`${this.file}.new`, line);
      renameSync(`${this.file}.new`, this.file);
    } else appendFileSync(this.file, line);
    return true;
  }

  reset(): void {
    rmSync(this.file, { force: true });
  }
}
