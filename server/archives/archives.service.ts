/**
 * Server-side archive work: listing (ZIP, tar, tar.gz), extraction of ZIPs (an op; every file through the
 * write gate) and creation from selected paths (an op). All three are bounded
 * by `limits.max_archive_bytes` (0 = no limit). Extraction refuses the whole
 * archive before writing anything when an entry would escape the destination
 * (zip slip), is encrypted, declares too much or compresses suspiciously well;
 * symlink entries are never materialised.
 */
import { PassThrough, Transform, pipeline, type Readable } from 'node:stream';
import type { JobContext, JobQueue } from '../jobs';
import type { Catalogue } from '../catalogue';
import type { Principal } from '../auth';
import type { Actor, RequestMeta } from '../events';
import type { StorageDriver, Entry } from '../storage';
import { AppError } from '../errors';
import { baseName, cleanRel, isInternalName, joinRel, parentRel } from '../lib/paths';
import type { Db } from '../db';
import { openZip, entryProblem, type ZipEntry } from './zip-reader';
import { ZipWriter } from './zip-writer';
import { isTarName, listTar } from './tar-reader';
import { shouldCompress } from './compressible';

export const EXTRACT_JOB = 'archive.extract';
export const ADD_JOB = 'archive.add';
/** An entry is a bomb when it inflates more than this many times and is large enough to matter. */
export const MAX_RATIO = 200;
const RATIO_MIN_BYTES = 16 * 1024 * 1024;
export const MAX_PATHS = 500;

interface Caller {
  principal: Principal;
  actor: Actor | null;
  request: RequestMeta;
}
interface Place {
  storage_id: number;
  rel: string;
}
interface ExtractPayload {
  source: Place;
  dest: Place;
  overwrite: boolean;
  actor: Actor | null;
  request: RequestMeta;
}
interface AddPayload {
  sources: Place[];
  dest: Place;
  compression: 'deflate' | 'store';
  actor: Actor | null;
  request: RequestMeta;
}

export class ArchivesService {
  constructor(private db: Db, private catalogue: Catalogue, private queue: JobQueue, private maxBytes: number) {}

  /** Registers the two op kinds (one attempt each: a half-done extraction is not retried blindly). */
  register(): void {
    this.queue.register<ExtractPayload>(EXTRACT_JOB, (ctx) => this.extract(ctx), { concurrency: 2, maxAttempts: 1 });
    this.queue.register<AddPayload>(ADD_JOB, (ctx) => this.add(ctx), { concurrency: 2, maxAttempts: 1 });
  }

  /**
   * The entries of a ZIP, tar or tar.gz the caller can read (tar by its name:
   * `.tar`, `.tar.gz`, `.tgz`). Missing → `not_found`; too large (the file, or
   * a tar.gz's inflated stream) → `archive_too_large`.
   */
  async list(p: Principal, path: string): Promise<{ entries: Array<{ name: string; size: number; is_dir: boolean; modified: string }> }> {
    const { driver, rel, size } = await this.archive(p, path);
    if (isTarName(rel)) {
      const entries = await listTar(await driver.read(rel), { gzip: !/\.tar$/i.test(rel), maxBytes: this.maxBytes });
      return { entries: entries.map((e) => ({ name: e.name, size: e.size, is_dir: e.is_dir, modified: e.modified })) };
    }
    const zip = await openZip(driver, rel, size);
    zip.close();
    return { entries: zip.entries.map((e) => ({ name: e.name, size: e.size, is_dir: e.is_dir, modified: e.modified })) };
  }

  /**
   * Checks the archive and the destination now (so zip slip, encryption, bombs
   * and conflicts answer at once) and queues the extraction. Returns the op id.
   */
  async startExtract(c: Caller, b: { path: string; dest: string; overwrite: boolean }): Promise<string> {
    const { driver, rel, size, storageId } = await this.archive(c.principal, b.path);
    if (isTarName(rel)) throw new AppError('archive_invalid', { reason: 'only ZIP archives can be extracted' }, { reason: 'unsupported_format' });
    const dest = this.catalogue.resolve(c.principal, b.dest, 'editor');
    const zip = await openZip(driver, rel, size);
    zip.close();
    this.vet(zip.entries, { storage_id: dest.storage.id, rel: dest.rel }, b.overwrite);
    const payload: ExtractPayload = { source: { storage_id: storageId, rel }, dest: { storage_id: dest.storage.id, rel: dest.rel }, overwrite: b.overwrite, actor: c.actor, request: c.request };
    return this.queue.enqueue(EXTRACT_JOB, payload, { visible: true, ownerId: c.principal.id });
  }

  /** Checks the sources, the size budget and the target, then queues the ZIP creation. Returns the op id. */
  async startAdd(c: Caller, b: { paths: string[]; dest: string; compression: 'deflate' | 'store' }): Promise<string> {
    if (b.paths.length > MAX_PATHS) throw new AppError('too_many_paths', { max: MAX_PATHS }, { max: MAX_PATHS });
    const sources = b.paths.map((path) => {
      const r = this.catalogue.resolve(c.principal, path, 'viewer');
      if (r.rel === '') throw new AppError('bad_path', {}, { reason: 'a storage root cannot be archived' });
      return { storage_id: r.storage.id, rel: r.rel };
    });
    const dest = this.catalogue.resolve(c.principal, b.dest, 'editor');
    if (dest.rel === '') throw new AppError('bad_path', {}, { field: 'dest' });
    const existing = this.catalogue.nodes.get(dest.storage.id, dest.rel);
    if (existing && !existing.deleted_at) throw new AppError('conflict', { path: b.dest }, { path: b.dest });
    const declared = sources.reduce((n, s) => n + this.treeBytes(s), 0);
    this.budget(declared);
    const payload: AddPayload = { sources, dest: { storage_id: dest.storage.id, rel: dest.rel }, compression: b.compression, actor: c.actor, request: c.request };
    return this.queue.enqueue(ADD_JOB, payload, { visible: true, ownerId: c.principal.id });
  }

  private async archive(p: Principal, path: string) {
    const r = this.catalogue.resolve(p, path, 'viewer');
    const driver = await this.catalogue.driverFor(r.storage.id);
    const st = await driver.stat(r.rel);
    if (st.type !== 'file') throw new AppError('archive_invalid', { reason: 'not a file' }, { reason: 'not_a_file' });
    this.budget(st.size);
    return { driver, rel: r.rel, size: st.size, storageId: r.storage.id };
  }

  private budget(bytes: number): void {
    if (this.maxBytes > 0 && bytes > this.maxBytes) throw new AppError('archive_too_large', { max: this.maxBytes }, { max: this.maxBytes });
  }

  /** Sum of file sizes at and below a place, from the catalogue (the job checks the real sizes again). */
  private treeBytes(s: Place): number {
    const row = this.catalogue.nodes.get(s.storage_id, s.rel);
    if (!row || row.deleted_at) throw new AppError('not_found', { path: s.rel });
    if (row.type === 'file') return row.size;
    const sum = this.db.sqlite
      .prepare("SELECT IFNULL(sum(size), 0) AS n FROM nodes WHERE storage_id = ? AND type = 'file' AND deleted_at IS NULL AND path >= ? AND path < ?")
      .get(s.storage_id, s.rel + '/', s.rel + '0') as { n: number };
    return sum.n;
  }

  /** Every refusal that must come before the first byte is written. Returns the entries to materialise. */
  private vet(entries: ZipEntry[], dest: Place, overwrite: boolean): ZipEntry[] {
    let total = 0;
    const keep: ZipEntry[] = [];
    for (const e of entries) {
      const problem = entryProblem(e.name);
      if (problem) throw new AppError('archive_invalid', { reason: problem }, { entry: e.name, reason: problem });
      try {
        cleanRel(e.name);
      } catch (err) {
        throw new AppError('archive_invalid', { reason: (err as AppError).code }, { entry: e.name, reason: (err as AppError).code });
      }
      if (e.encrypted) throw new AppError('archive_encrypted', { entry: e.name }, { entry: e.name });
      if (e.symlink) continue;
      if (e.size > RATIO_MIN_BYTES && e.size > e.compressed * MAX_RATIO) throw new AppError('archive_invalid', { reason: 'compression_ratio' }, { entry: e.name, reason: 'compression_ratio' });
      total += e.size;
      keep.push(e);
    }
    this.budget(total);
    if (!overwrite) {
      const clashes = keep
        .filter((e) => !e.is_dir)
        .map((e) => joinRel(dest.rel, cleanRel(e.name)))
        .filter((path) => {
          const n = this.catalogue.nodes.get(dest.storage_id, path);
          return n && !n.deleted_at;
        });
      if (clashes.length) throw new AppError('conflict', { path: clashes[0] }, { paths: clashes.slice(0, 50) });
    }
    return keep;
  }

  private async extract(ctx: JobContext<ExtractPayload>): Promise<{ files: number; dirs: number; bytes: number; skipped_symlinks: number }> {
    const { source, dest, overwrite } = ctx.payload;
    const src = await this.catalogue.driverFor(source.storage_id);
    const out = await this.catalogue.driverFor(dest.storage_id);
    const st = await src.stat(source.rel);
    const zip = await openZip(src, source.rel, st.size);
    try {
      const entries = this.vet(zip.entries, dest, overwrite);
      const total = entries.reduce((n, e) => n + e.size, 0);
      const made = new Set<string>();
      const gate = (path: string, entry: Entry) =>
        this.catalogue.gate.written(dest.storage_id, path, entry, { actor: ctx.payload.actor, request: ctx.payload.request, origin: 'extract' });
      const mkdirs = async (dir: string) => {
        if (made.has(dir)) return;
        await out.mkdir(dir);
        made.add(dir);
        if (dir !== '') await gate(dir, { ...(await out.stat(dir)), name: baseName(dir) });
      };
      await mkdirs(dest.rel);
      let done = 0;
      let files = 0;
      for (const e of entries) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const target = joinRel(dest.rel, cleanRel(e.name));
        if (e.is_dir) {
          await mkdirs(target);
          continue;
        }
        await mkdirs(parentRel(target));
        // pipeline carries a failure of the entry's bytes into `body`, where the driver's write sees it.
        const body = pipeline(await zip.open(e), this.counter((n) => (done += n)), () => undefined);
        const written = await out.write(target, body, { size: e.size, overwrite, signal: ctx.signal });
        await gate(target, written);
        files++;
        ctx.progress(total ? done / total : 1, { done, total });
      }
      return { files, dirs: made.size, bytes: done, skipped_symlinks: zip.entries.filter((e) => e.symlink).length };
    } finally {
      zip.close();
    }
  }

  /** Counts the bytes that pass, for the op's progress (the reader already cuts an entry at its declared size). */
  private counter(add: (n: number) => void): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        add(chunk.length);
        cb(null, chunk);
      },
    });
  }

  private async add(ctx: JobContext<AddPayload>): Promise<{ files: number; bytes: number; size: number }> {
    const { sources, dest, compression } = ctx.payload;
    const out = await this.catalogue.driverFor(dest.storage_id);
    const plan: Array<{ driver: StorageDriver; rel: string; name: string; entry: Entry }> = [];
    for (const s of sources) {
      const driver = await this.catalogue.driverFor(s.storage_id);
      for await (const item of walkTree(driver, s.rel, ctx.signal)) plan.push({ driver, ...item });
    }
    const total = plan.reduce((n, p) => n + (p.entry.type === 'file' ? p.entry.size : 0), 0);
    this.budget(total);
    const pass = new PassThrough({ highWaterMark: 1 << 20 });
    const writing = out.write(dest.rel, pass, { overwrite: false, signal: ctx.signal, mime: 'application/zip' });
    const zip = new ZipWriter(pass, { signal: ctx.signal });
    let done = 0;
    let files = 0;
    try {
      for (const p of plan) {
        if (p.entry.type === 'dir') {
          await zip.addDir(p.name, p.entry.mtime || Date.now());
          continue;
        }
        const body: Readable = await p.driver.read(p.rel, undefined, ctx.signal);
        await zip.addFile(p.name, body, { size: p.entry.size, mtime: p.entry.mtime || Date.now(), compress: compression === 'deflate' && shouldCompress(p.name) });
        done += p.entry.size;
        files++;
        this.budget(zip.bytesWritten);
        ctx.progress(total ? done / total : 1, { done, total });
      }
      await zip.finish();
    } catch (e) {
      pass.destroy(e as Error);
      await writing.catch(() => undefined);
      throw e;
    }
    const entry = await writing;
    await this.catalogue.gate.written(dest.storage_id, dest.rel, entry, { actor: ctx.payload.actor, request: ctx.payload.request, origin: 'copy', audit: 'file.upload', meta: { archive: true } });
    return { files, bytes: done, size: entry.size };
  }
}

/** A file, or a folder and everything below it, with entry names relative to the item's parent. */
async function* walkTree(driver: StorageDriver, rel: string, signal: AbortSignal): AsyncIterable<{ rel: string; name: string; entry: Entry }> {
  const top = await driver.stat(rel);
  const base = baseName(rel);
  yield { rel, name: base, entry: top };
  if (top.type !== 'dir') return;
  const stack = [rel];
  while (stack.length) {
    const dir = stack.pop()!;
    for await (const e of driver.list(dir)) {
      if (signal.aborted) throw signal.reason;
      if (isInternalName(e.name)) continue;
      const child = joinRel(dir, e.name);
      yield { rel: child, name: base + child.slice(rel.length), entry: e };
      if (e.type === 'dir') stack.push(child);
    }
  }
}
