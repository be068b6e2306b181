/**
 * Server-side archive work: listing (ZIP, tar, tar.gz), extraction of ZIPs (an op; every file through the
 * write gate) and creation from selected paths (an op). All three are bounded
 * by `limits.max_archive_bytes` (0 = no limit). Extraction refuses the whole
 * archive before writing anything when an entry would escape the destination
 * (zip slip), is encrypted, declares too much or compresses suspiciously well;
 * symlink entries are never materialised. An extraction a crash interrupted
 * resumes per file from its journal; a ZIP creation from its last checkpoint
 * (the temp file in `buildDir` and the entries journalled with it,
 * lib/zip-build.ts) (docs/desktop.md, "Resumable work").
 */
import { createReadStream, readdirSync, rmSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, pipeline, type Readable } from 'node:stream';
import type { JobContext, JobQueue, OpJournal } from '../jobs';
import { isBusy } from '../db';
import { actorSpec, actorTenant, type Actor, type ActorRestorer, type ActorSpec } from '../auth';
import type { Catalogue } from '../catalogue';
import type { RequestMeta } from '../events';
import type { ActorFiles, FileService, FileStat, OpenFile, Place } from '../files';
import { AppError } from '../errors';
import { baseName, cleanRel, isInternalName, joinRel, parentRel } from '../lib/paths';
import { DEFAULT_POLICY, ZipFileBuild, entryKey, validEntries, type CommitPolicy, type ZipBuildEntry, type ZipBuildStore } from '../lib/zip-build';
import { openZip, entryProblem, readZipEnd, MAX_PATH_BYTES, type ZipEntry } from './zip-reader';
import { isTarName, listTar } from './tar-reader';
import { shouldCompress } from './compressible';

export const EXTRACT_JOB = 'archive.extract';
/** Journal keys of an extraction: it passed its checks (`started`), and each file written (`x:<entry name>`). */
const STARTED = 'started';
export const ADD_JOB = 'archive.add';
/** An entry is a bomb when it inflates more than this many times and is large enough to matter. */
export const MAX_RATIO = 200;
const RATIO_MIN_BYTES = 16 * 1024 * 1024;
export const MAX_PATHS = 500;
/**
 * An extract request reads and vets a central directory up to this size itself, so its refusals answer the
 * request (about 10,000 entries); a larger one is read once, by the op, after the 202.
 */
export const VET_IN_REQUEST_BYTES = 1024 * 1024;
const VET_SLICE = 2000;

interface ExtractPayload {
  source: Place;
  dest: Place;
  overwrite: boolean;
  actor: ActorSpec;
  request?: RequestMeta;
}
interface AddPayload {
  sources: Place[];
  dest: Place;
  compression: 'deflate' | 'store';
  actor: ActorSpec;
  request?: RequestMeta;
}

declare module '../jobs/types' {
  interface JobPayloads {
    [EXTRACT_JOB]: ExtractPayload;
    [ADD_JOB]: AddPayload;
  }
}

export class ArchivesService {
  /**
   * `buildDir`: where ZIP builds write their temp files (in the data dir); `policy`: how often a build
   * checkpoints (null: never; a crash then restarts it).
   */
  constructor(
    private files: FileService,
    private catalogue: Catalogue,
    private queue: JobQueue,
    private actors: ActorRestorer,
    private maxBytes: number,
    private buildDir: string,
    private policy: CommitPolicy | null = DEFAULT_POLICY,
  ) {
    // One attempt each: a half-done extraction is not retried blindly.
    queue.register(EXTRACT_JOB, (ctx) => this.extract(ctx), { concurrency: 2, maxAttempts: 1, keepsAwake: true });
    queue.register(ADD_JOB, (ctx) => this.add(ctx), { concurrency: 2, maxAttempts: 1, keepsAwake: true });
  }

  /**
   * The entries of a ZIP, tar or tar.gz the caller can read (tar by its name:
   * `.tar`, `.tar.gz`, `.tgz`). Missing → `not_found`; too large (the file, or
   * a tar.gz's inflated stream) → `archive_too_large`.
   */
  async list(a: Actor, path: string): Promise<{ entries: Array<{ name: string; size: number; is_dir: boolean; modified: string }> }> {
    const f = await this.archive(this.files.forActor(a, 'refuse'), path);
    if (isTarName(f.name)) {
      const entries = await listTar(await f.read(), { gzip: !/\.tar$/i.test(f.name), maxBytes: this.maxBytes });
      return { entries: entries.map((e) => ({ name: e.name, size: e.size, is_dir: e.is_dir, modified: e.modified })) };
    }
    const zip = await openZip(f);
    zip.close();
    return { entries: zip.entries.map((e) => ({ name: e.name, size: e.size, is_dir: e.is_dir, modified: e.modified })) };
  }

  /**
   * Checks the archive's end records and the destination now and queues the
   * extraction. Returns the op id. A central directory up to
   * `VET_IN_REQUEST_BYTES` is vetted here too (zip slip, encryption, bombs,
   * path length and conflicts answer the request); a larger one is vetted by
   * the op before it writes anything, which then fails with the same error.
   */
  async startExtract(a: Actor, b: { path: string; dest: string; overwrite: boolean }): Promise<string> {
    const fa = this.files.forActor(a, 'refuse');
    const f = await this.archive(fa, b.path);
    if (isTarName(f.name)) throw new AppError('archive_invalid', { reason: 'only ZIP archives can be extracted' }, { reason: 'unsupported_format' });
    const dest = fa.target(b.dest, 'editor');
    const end = await readZipEnd(f);
    if (end.cdSize <= VET_IN_REQUEST_BYTES) await this.vet((await openZip(f, { end })).entries, dest.place, b.overwrite);
    const payload: ExtractPayload = { source: f.place, dest: dest.place, overwrite: b.overwrite, actor: actorSpec(a), request: a.request };
    return this.queue.enqueue(EXTRACT_JOB, payload, { tenant: actorTenant(a), visible: true, ownerId: ownerOf(a) });
  }

  /** Checks the sources, the size budget and the target, then queues the ZIP creation. Returns the op id. */
  async startAdd(a: Actor, b: { paths: string[]; dest: string; compression: 'deflate' | 'store' }): Promise<string> {
    if (b.paths.length > MAX_PATHS) throw new AppError('too_many_paths', { max: MAX_PATHS }, { max: MAX_PATHS });
    const fa = this.files.forActor(a, 'refuse');
    const sources = b.paths.map((path) => {
      const r = fa.target(path, 'viewer');
      if (r.rel === '') throw new AppError('bad_path', {}, { reason: 'a storage root cannot be archived' });
      return r.place;
    });
    const dest = fa.target(b.dest, 'editor');
    if (dest.rel === '') throw new AppError('bad_path', {}, { field: 'dest' });
    const existing = await this.catalogue.nodes.get(dest.storage, dest.rel);
    if (existing && !existing.deleted_at) throw new AppError('conflict', { path: b.dest }, { path: b.dest });
    let declared = 0;
    for (const s of sources) declared += await this.treeBytes(s);
    this.budget(declared);
    const payload: AddPayload = { sources, dest: dest.place, compression: b.compression, actor: actorSpec(a), request: a.request };
    return this.queue.enqueue(ADD_JOB, payload, { tenant: actorTenant(a), visible: true, ownerId: ownerOf(a) });
  }

  /** The archive file, within the size budget. A folder → `archive_invalid`. */
  private async archive(fa: ActorFiles, path: string | Place): Promise<OpenFile> {
    const st = await fa.stat(path);
    if (st.type !== 'file') throw new AppError('archive_invalid', { reason: 'not a file' }, { reason: 'not_a_file' });
    this.budget(st.size);
    return fa.open(path);
  }

  private budget(bytes: number): void {
    if (this.maxBytes > 0 && bytes > this.maxBytes) throw new AppError('archive_too_large', { max: this.maxBytes }, { max: this.maxBytes });
  }

  /** Sum of file sizes at and below a place, from the catalogue (the job checks the real sizes again). */
  private async treeBytes(s: Place): Promise<number> {
    const storage = this.catalogue.storageOf(s.storage_id);
    const row = await this.catalogue.nodes.get(storage, s.rel);
    if (!row || row.deleted_at) throw new AppError('not_found', { path: s.rel });
    return row.type === 'file' ? row.size : this.catalogue.nodes.treeBytes(storage, s.rel);
  }

  /**
   * Every refusal that must come before the first byte is written. Returns the entries to materialise.
   * Works in slices of `VET_SLICE` entries, yielding to the event loop between them and stopping with
   * `cancelled` once `signal` is aborted (100,000 entries take seconds on a loaded machine).
   */
  private async vet(entries: ZipEntry[], dest: Place, overwrite: boolean, signal?: AbortSignal): Promise<ZipEntry[]> {
    let total = 0;
    const keep: ZipEntry[] = [];
    const files: string[] = [];
    for (let i = 0; i < entries.length; i++) {
      if (i % VET_SLICE === VET_SLICE - 1) await pause(signal);
      const e = entries[i];
      const problem = entryProblem(e.name);
      if (problem) throw new AppError('archive_invalid', { reason: problem }, { entry: e.name, reason: problem });
      let target: string;
      try {
        target = joinRel(dest.rel, cleanRel(e.name));
      } catch (err) {
        throw new AppError('archive_invalid', { reason: (err as AppError).code }, { entry: e.name, reason: (err as AppError).code });
      }
      // The whole path under the destination, not only each segment (the reader already refused longer names).
      if (Buffer.byteLength(target) > MAX_PATH_BYTES)
        throw new AppError('archive_invalid', { reason: 'path_too_long' }, { entry: e.name.slice(0, 256), reason: 'path_too_long', max: MAX_PATH_BYTES });
      if (e.encrypted) throw new AppError('archive_encrypted', { entry: e.name }, { entry: e.name });
      if (e.symlink) continue;
      if (e.size > RATIO_MIN_BYTES && e.size > e.compressed * MAX_RATIO)
        throw new AppError('archive_invalid', { reason: 'compression_ratio' }, { entry: e.name, reason: 'compression_ratio' });
      total += e.size;
      keep.push(e);
      if (!e.is_dir) files.push(target);
    }
    this.budget(total);
    if (!overwrite) {
      const clashes: string[] = [];
      // A slice of paths per read, and a pause between slices.
      for (let i = 0; i < files.length && clashes.length < 50; i += VET_SLICE) {
        if (i > 0) await pause(signal);
        const slice = files.slice(i, i + VET_SLICE);
        (await this.catalogue.nodes.getMany(this.catalogue.storageOf(dest.storage_id), slice)).forEach((n, j) => {
          if (n && !n.deleted_at && clashes.length < 50) clashes.push(slice[j]);
        });
      }
      if (clashes.length) throw new AppError('conflict', { path: clashes[0] }, { paths: clashes });
    }
    return keep;
  }

  private async extract(ctx: JobContext<ExtractPayload>): Promise<{ files: number; dirs: number; bytes: number; skipped_symlinks: number }> {
    const { source, dest, overwrite } = ctx.payload;
    const fa = this.files.forActor(await this.actors.restore(ctx.payload.actor, ctx.payload.request), 'refuse');
    const zip = await openZip(await this.archive(fa, source), { signal: ctx.signal });
    try {
      // Resuming after a crash: the first attempt checked for clashes, and its own output is not one. Files it
      // recorded are skipped; one it wrote but had not recorded is written again (replaced).
      const resumed = await ctx.journal.has(STARTED);
      const entries = await this.vet(zip.entries, dest, overwrite || resumed, ctx.signal);
      if (!resumed) await ctx.journal.put(STARTED);
      const total = entries.reduce((n, e) => n + e.size, 0);
      const made = new Set<string>();
      const at = (rel: string): Place => ({ storage_id: dest.storage_id, rel });
      const mkdirs = async (dir: string) => {
        if (made.has(dir)) return;
        if (dir !== '') await fa.mkdir(at(dir));
        made.add(dir);
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
        if (resumed && (await ctx.journal.has(`x:${e.name}`))) {
          done += e.size;
          files++;
          continue;
        }
        await mkdirs(parentRel(target));
        // pipeline carries a failure of the entry's bytes (the reader cuts it at its declared size) into `body`, where the write sees it.
        const body = pipeline(
          await zip.open(e),
          this.counter((n) => (done += n)),
          () => undefined,
        );
        await fa.write(at(target), body, { size: e.size, overwrite: overwrite || resumed, signal: ctx.signal, origin: 'extract', version: false });
        await ctx.journal.put(`x:${e.name}`);
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
    const fa = this.files.forActor(await this.actors.restore(ctx.payload.actor, ctx.payload.request), 'refuse');
    const temp = this.buildFile(ctx.id);
    const built = readBuilt(await ctx.journal.get(BUILT));
    if (built) {
      // The archive was complete before the crash: it was published (announce it, the crash may have come
      // before that), or it is published now from the temp file.
      const target = fa.staged(dest);
      const at = await target.statOrNull();
      if (at?.type === 'file' && at.size === built.size) {
        await target.announce(at, fa.ctx('copy', { audit: 'file.upload', meta: { archive: true } }));
        await rm(temp, { force: true });
        return { files: built.files, bytes: built.bytes, size: at.size };
      }
      const size = (await stat(temp).catch(() => null))?.size;
      if (size === built.size) return { ...(await this.publish(ctx, fa, temp, built.size)), files: built.files, bytes: built.bytes };
    }
    const plan: Array<{ place: Place; name: string; entry: FileStat; key: string }> = [];
    for (const s of sources)
      for (const item of await fa.tree(s, ctx.signal)) {
        if (item.rel.split('/').some(isInternalName)) continue;
        const base = baseName(s.rel);
        const name = item.rel === '' ? base : `${base}/${item.rel}`;
        const e = item.entry;
        plan.push({
          place: { storage_id: s.storage_id, rel: item.rel === '' ? s.rel : joinRel(s.rel, item.rel) },
          name,
          entry: e,
          key: entryKey(name, e.type === 'dir' ? 'dir' : 'file', e.type === 'dir' ? 0 : e.size, e.mtime || 0),
        });
      }
    const total = plan.reduce((n, p) => n + (p.entry.type === 'file' ? p.entry.size : 0), 0);
    this.budget(total);
    await mkdir(this.buildDir, { recursive: true });
    const build = await ZipFileBuild.open(
      temp,
      journalStore(ctx.journal, temp),
      plan.map((p) => p.key),
      { signal: ctx.signal, policy: this.policy },
    );
    let done = 0;
    let files = 0;
    const first = build.resumed.entries;
    for (const p of plan.slice(0, first)) if (p.entry.type === 'file') (done += p.entry.size), files++;
    if (first) ctx.progress(total ? done / total : 1, { done, total }, `resumed at entry ${first} of ${plan.length} (byte ${build.resumed.bytes})`);
    let size: number;
    try {
      for (const p of plan.slice(first)) {
        const mtime = p.entry.mtime || Date.now();
        if (p.entry.type === 'dir') {
          await build.addDir(p.key, p.name, mtime);
          continue;
        }
        const body: Readable = await fa.read(p.place, undefined, ctx.signal);
        await build.addFile(p.key, p.name, body, { size: p.entry.size, mtime, compress: compression === 'deflate' && shouldCompress(p.name) });
        done += p.entry.size;
        files++;
        this.budget(build.bytesWritten);
        ctx.progress(total ? done / total : 1, { done, total });
      }
      size = await build.finish();
    } catch (e) {
      // A stopping server resumes the op at the next boot from the temp file; any other end discards it.
      if (ctx.interrupted()) await build.close();
      else await build.discard();
      throw e;
    }
    await ctx.journal.put(BUILT, JSON.stringify({ size, files, bytes: done } satisfies Built));
    const out = await this.publish(ctx, fa, temp, size);
    return { files, bytes: done, size: out.size };
  }

  /** Copies the finished archive to its target (one atomic write through the file service), then deletes the temp. */
  private async publish(ctx: JobContext<AddPayload>, fa: ActorFiles, temp: string, size: number): Promise<{ size: number }> {
    try {
      const body = createReadStream(temp, { highWaterMark: 1 << 20 });
      const node = await fa.write(ctx.payload.dest, body, {
        size,
        overwrite: false,
        signal: ctx.signal,
        mime: 'application/zip',
        origin: 'copy',
        audit: 'file.upload',
        meta: { archive: true },
        version: false,
      });
      await rm(temp, { force: true });
      return { size: node.size };
    } catch (e) {
      if (!ctx.interrupted()) await rm(temp, { force: true });
      throw e;
    }
  }

  /** The temp file of an op's archive. */
  private buildFile(opId: string): string {
    return join(this.buildDir, `${opId}.zip.part`);
  }

  /**
   * Deletes temp files of builds no op will resume (the op ended, or is gone):
   * a crash can leave one whose op a later start cancelled or pruned. Runs once at start.
   */
  async sweepBuilds(): Promise<number> {
    let removed = 0;
    for (const name of (() => {
      try {
        return readdirSync(this.buildDir);
      } catch {
        return [] as string[];
      }
    })()) {
      const m = /^(op_[A-Za-z0-9_-]+)\.zip\.part$/.exec(name);
      if (!m) continue;
      if (await this.queue.liveInAnyTenant(m[1])) continue;
      rmSync(join(this.buildDir, name), { force: true });
      removed++;
    }
    return removed;
  }
}

/** Journal key of a finished archive not yet published (`{size, files, bytes}`). */
const BUILT = 'built';
interface Built {
  size: number;
  files: number;
  bytes: number;
}

function readBuilt(raw: string | undefined): Built | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Built;
    return Number.isSafeInteger(v.size) && Number.isSafeInteger(v.files) && Number.isSafeInteger(v.bytes) ? v : null;
  } catch {
    return null;
  }
}

/**
 * An archive build's checkpoints in its op's journal: `zip` holds the temp
 * file, its committed length and entry count; `z:<n>` the central-directory
 * records of the entries from the n-th on, one row per checkpoint. The batch
 * row is written before the `zip` row that counts it, so a crash between the
 * two leaves an uncounted row that the next checkpoint overwrites. A database
 * held by another program skips the checkpoint (the journal lags; the next one
 * records the entries too).
 */
export function journalStore(journal: OpJournal, temp: string): ZipBuildStore {
  return {
    async load() {
      try {
        const head = JSON.parse((await journal.get(ZIP_KEY)) || 'null') as { temp: string; length: number; count: number } | null;
        if (!head || head.temp !== temp || !Number.isSafeInteger(head.length) || !Number.isSafeInteger(head.count)) return null;
        const entries: ZipBuildEntry[] = [];
        while (entries.length < head.count) {
          const batch = JSON.parse((await journal.get(`z:${entries.length}`)) || 'null') as unknown;
          if (!validEntries(batch) || batch.length === 0) return null;
          for (const e of batch) entries.push(e);
        }
        return { length: head.length, entries: entries.slice(0, head.count) };
      } catch {
        return null;
      }
    },
    async commit(length, before, added) {
      try {
        if (added.length) await journal.put(`z:${before}`, JSON.stringify(added));
        await journal.put(ZIP_KEY, JSON.stringify({ temp, length, count: before + added.length }));
        return true;
      } catch (e) {
        if (isBusy(e)) return false;
        throw e;
      }
    },
    async reset() {
      await journal.put(ZIP_KEY, '');
    },
  };
}
const ZIP_KEY = 'zip';

/** Lets the event loop run (a cancel arrives this way) and stops once `signal` is aborted. */
async function pause(signal?: AbortSignal): Promise<void> {
  await new Promise((r) => setImmediate(r));
  if (signal?.aborted) throw new AppError('cancelled');
}

/** The account an archive op belongs to (shown in its ops list). */
const ownerOf = (a: Actor): number | null => (a.kind === 'system' ? null : a.principal.id);
