/**
 * Folder ZIPs of share links. An archive is built once into the ZIP cache
 * (`<data>/cache/zips/<share id>-<fingerprint>.zip`): a warmer pre-builds it
 * at link creation and re-checks active folder links every 5 minutes (up to
 * the warm ceiling; larger folders are built on first click). The fingerprint
 * hashes the catalogue rows under the folder, so a changed folder gets a new
 * archive. Archives older than the maximum age, or of links that ended, are
 * deleted; a running build stops within a minute of its link ending.
 */
import { existsSync } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { ZipWriter } from '../lib/zip-writer';
import { SidecarStore, ZipFileBuild, entryKey, type CommitPolicy } from '../lib/zip-build';
import { linkActor, type Principal } from '../auth';
import type { Catalogue } from '../catalogue';
import type { TenantScope } from '../db';
import { AppError, isAppError } from '../errors';
import type { FileService } from '../files';
import { shareStorage, type ShareRow } from './shares.repo';
import type { SharesService } from './shares.service';

/** How often a build re-reads its link's state (the spec's "within about a minute"). */
const LIVENESS_MS = 15_000;

export interface ZipEntryRow {
  /** Path relative to the shared folder. */
  path: string;
  type: 'file' | 'dir';
  size: number;
  mtime: number;
}

export interface ZipStatus {
  state: 'ready' | 'building' | 'none';
  bytes_done: number;
  bytes_total: number;
}

interface Build {
  fp: string;
  done: number;
  total: number;
  abort: AbortController;
  promise: Promise<string>;
}

export interface ShareZipOptions {
  catalogue: Catalogue;
  files: FileService;
  shares: SharesService;
  dir: string;
  /** 0 = no ceiling. */
  warmMaxBytes: number;
  /** 0 = keep for the link's life. */
  maxAgeMs: number;
  log: (msg: string, err?: unknown) => void;
  /** How often a build checkpoints (lib/zip-build.ts); null: never (a crash restarts it). Default 8 MiB / 256 entries / 2 s. */
  zipPolicy?: CommitPolicy | null;
  /** A lane of the governor (jobs/governor.ts) for each warm-up: pre-building is background work. */
  lane?: (signal: AbortSignal) => Promise<() => void>;
}

export class ShareZips {
  private builds = new Map<number, Build>();
  /** Ends warm-ups still waiting for a lane at shutdown. */
  private stopping = new AbortController();

  constructor(private o: ShareZipOptions) {}

  /** Files and folders under the shared folder, from the catalogue, parents before children. */
  async entries(s: ShareRow): Promise<ZipEntryRow[]> {
    const prefix = s.rel === '' ? '' : `${s.rel}/`;
    return (await this.o.catalogue.nodes.subtree(shareStorage(s), s.rel))
      .filter((r) => r.path !== s.rel)
      .map((r) => ({ ...r, path: r.path.slice(prefix.length) }));
  }

  /** Archive state for `zip=status` polls: memory and one stat, never a build. */
  async status(s: ShareRow): Promise<ZipStatus> {
    const b = this.builds.get(s.id);
    if (b) return { state: 'building', bytes_done: b.done, bytes_total: b.total };
    const rows = await this.entries(s);
    const file = await this.cached(s, fingerprint(rows));
    const total = rows.reduce((n, r) => n + r.size, 0);
    return file ? { state: 'ready', bytes_done: total, bytes_total: total } : { state: 'none', bytes_done: 0, bytes_total: total };
  }

  /** The cached archive of the folder as it is now, or null. */
  async ready(s: ShareRow): Promise<{ file: string; size: number } | null> {
    const file = await this.cached(s, fingerprint(await this.entries(s)));
    if (!file) return null;
    return { file, size: (await stat(file)).size };
  }

  /**
   * Writes the folder's archive to `out` straight from the storage (first
   * byte at once). Files that vanish meanwhile are skipped; `signal` stops it.
   */
  async stream(s: ShareRow, owner: Principal, out: Writable, signal: AbortSignal, progress?: (bytes: number) => void): Promise<void> {
    const zip = new ZipWriter(out, { signal });
    await this.fill(
      s,
      owner,
      await this.entries(s),
      { dir: (e) => zip.addDir(e.path, e.mtime || Date.now()), file: (e, body) => zip.addFile(e.path, body, stored(e)) },
      signal,
      progress,
    );
    await zip.finish();
  }

  /** Adds `rows` to an archive as the link reads them (`owner`: its creator, null when gone); files that vanished are left out. */
  private async fill(
    s: ShareRow,
    owner: Principal | null,
    rows: ZipEntryRow[],
    add: { dir(e: ZipEntryRow): Promise<void>; file(e: ZipEntryRow, body: Readable): Promise<void> },
    signal: AbortSignal,
    progress?: (bytes: number) => void,
  ): Promise<void> {
    if (!owner) throw new AppError('revoked');
    // Read as the link: its creator's rights, and nothing outside the shared folder.
    const fa = this.o.files.forActor(linkActor(owner, { id: s.id, storage_id: s.storage_id, rel: s.rel }));
    for (const e of rows) {
      if (signal.aborted) throw new AppError('cancelled');
      if (e.type === 'dir') {
        await add.dir(e);
        continue;
      }
      const rel = s.rel === '' ? e.path : `${s.rel}/${e.path}`;
      let body;
      try {
        body = await fa.read({ storage_id: s.storage_id, rel }, undefined, signal);
      } catch (err) {
        if (isAppError(err) && err.code === 'not_found') continue;
        throw err;
      }
      await add.file(e, body);
      progress?.(e.size);
    }
  }

  /**
   * Builds the archive into the cache once (concurrent callers share the
   * build) and resolves to its file. With `live`, a new build also streams
   * every byte to that output as it is written (the first click gets its
   * download while the cache fills; a client that leaves does not stop the
   * build). `attached` says whether `live` is being fed. A folder changed
   * during the build keeps nothing stale: the file is named by the
   * fingerprint taken before it.
   *
   * The build checkpoints its progress in a sidecar (`<temp>.idx`,
   * lib/zip-build.ts): one a server crash or stop cut short goes on from its
   * last checkpoint at the next build of the same folder view (same
   * fingerprint); such a build feeds no live output (`attached` false: the
   * caller streams the archive itself).
   */
  async build(s: ShareRow, live?: Writable): Promise<{ promise: Promise<string>; attached: boolean }> {
    if (!this.builds.has(s.id)) {
      const rows = await this.entries(s);
      // Another build of this link may have started while the rows were read: one build per link.
      if (!this.builds.has(s.id)) return this.start(s, rows, live);
    }
    return { promise: this.builds.get(s.id)!.promise, attached: false };
  }

  private start(s: ShareRow, rows: ZipEntryRow[], live?: Writable): { promise: Promise<string>; attached: boolean } {
    const fp = fingerprint(rows);
    const abort = new AbortController();
    const b: Build = { fp, done: 0, total: rows.reduce((n, r) => n + r.size, 0), abort, promise: Promise.resolve('') };
    const final = join(this.o.dir, `${s.id}-${fp}.zip`);
    const temp = `${final}.part`;
    const store = new SidecarStore(`${temp}.idx`);
    if (live && existsSync(store.file)) live = undefined;
    b.promise = (async () => {
      const liveness = setInterval(() => {
        // A database that does not answer ends nothing: the next check asks again.
        void (async () => {
          const row = await this.o.shares.repo.byId(s, s.id);
          if (!row || (await this.o.shares.stateOf(row)) !== 'active') abort.abort();
        })().catch(() => undefined);
      }, LIVENESS_MS);
      liveness.unref();
      let zb: ZipFileBuild | null = null;
      try {
        zb = await ZipFileBuild.open(temp, store, rows.map(rowKey), {
          signal: abort.signal,
          policy: this.o.zipPolicy,
          wrap: live ? (file) => new Tee(file, live) : undefined,
        });
        const resumed = zb.resumed.entries;
        b.done = rows.slice(0, resumed).reduce((n, r) => n + (r.type === 'file' ? r.size : 0), 0);
        if (resumed) this.o.log(`share ${s.id}: ZIP build resumed at entry ${resumed} of ${rows.length} (byte ${zb.resumed.bytes})`);
        const build = zb;
        await this.fill(
          s,
          await this.o.shares.ownerPrincipal(s),
          rows.slice(resumed),
          { dir: (e) => build.addDir(rowKey(e), e.path, e.mtime || Date.now()), file: (e, body) => build.addFile(rowKey(e), e.path, body, stored(e)) },
          abort.signal,
          (n) => (b.done += n),
        );
        await zb.finish();
        await rename(temp, final);
        store.reset();
        await this.dropOthers(s.id, final);
        return final;
      } catch (e) {
        live?.destroy(e as Error);
        // A stopping server keeps the temp and its checkpoints (the next build of this view goes on from them).
        if (this.stopping.signal.aborted) await zb?.close();
        else if (zb) await zb.discard();
        else {
          await rm(temp, { force: true });
          store.reset();
        }
        throw e;
      } finally {
        clearInterval(liveness);
        this.builds.delete(s.id);
      }
    })();
    b.promise.catch(() => undefined);
    this.builds.set(s.id, b);
    return { promise: b.promise, attached: !!live };
  }

  /**
   * One warmer pass over `tenants` (every tenant: `TenantsRepo.list()`): builds missing archives of active
   * folder links under the warm ceiling, tenant by tenant, one at a time, then sweeps. Errors are logged,
   * never thrown.
   */
  async warm(tenants: readonly TenantScope[]): Promise<void> {
    for (const t of tenants)
      for (const s of await this.o.shares.repo.activeFolderLinks(t, new Date().toISOString())) {
        if ((await this.o.shares.stateOf(s)) !== 'active') continue;
        await this.warmOne(s);
      }
    await this.sweep(tenants);
  }

  /** Pre-builds one link's archive when it fits under the warm ceiling. */
  async warmOne(s: ShareRow): Promise<void> {
    if (!s.is_dir || s.kind !== 'link') return;
    const total = (await this.entries(s)).reduce((n, r) => n + r.size, 0);
    if (this.o.warmMaxBytes > 0 && total > this.o.warmMaxBytes) return;
    if (await this.ready(s)) return;
    const release = await this.o.lane?.(this.stopping.signal).catch(() => null);
    if (release === null) return; // shutting down
    try {
      await (await this.build(s)).promise.catch((e) => this.o.log(`share ${s.id}: ZIP warm-up failed`, e));
    } finally {
      release?.();
    }
  }

  /**
   * Deletes archives of links no longer active, stale fingerprints, and those past the maximum age. An
   * archive's name holds its share's id only: its row is looked up among every tenant's (`tenants`).
   */
  async sweep(tenants: readonly TenantScope[]): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.o.dir).catch(() => [] as string[])) {
      const m = /^(\d+)-([0-9a-f]+)\.zip(\.part(\.idx)?)?$/.exec(name);
      if (!m) continue;
      const id = Number(m[1]);
      if (m[3] && this.builds.has(id)) continue;
      const row = await this.o.shares.repo.byIdAmong(tenants, id);
      const file = join(this.o.dir, name);
      let drop = !row || (await this.o.shares.stateOf(row)) !== 'active' || m[2] !== fingerprint(await this.entries(row));
      // A build a crash or stop cut short stays while it can resume: its checkpoints sit beside it.
      if (!drop && m[3]) drop = !existsSync(m[4] ? file.slice(0, -4) : `${file}.idx`);
      if (!drop && this.o.maxAgeMs > 0) drop = now - (await stat(file).catch(() => ({ mtimeMs: now }))).mtimeMs > this.o.maxAgeMs;
      if (drop) await rm(file, { force: true });
    }
  }

  /** A link ended: stop its build and delete its archives. */
  async ended(shareId: number): Promise<void> {
    this.builds.get(shareId)?.abort.abort();
    // A running build removes its own temp when it stops; one left by a crash goes now.
    const building = this.builds.has(shareId);
    for (const name of await readdir(this.o.dir).catch(() => [] as string[]))
      if (name.startsWith(`${shareId}-`) && !(building && /\.part(\.idx)?$/.test(name))) await rm(join(this.o.dir, name), { force: true });
  }

  /** Stops every build (shutdown). */
  stopAll(): void {
    this.stopping.abort();
    for (const b of this.builds.values()) b.abort.abort();
  }

  private async cached(s: ShareRow, fp: string): Promise<string | null> {
    const file = join(this.o.dir, `${s.id}-${fp}.zip`);
    return (await stat(file).then(
      () => true,
      () => false,
    ))
      ? file
      : null;
  }

  private async dropOthers(shareId: number, keep: string): Promise<void> {
    for (const name of await readdir(this.o.dir))
      if (name.startsWith(`${shareId}-`) && name.endsWith('.zip') && join(this.o.dir, name) !== keep) await rm(join(this.o.dir, name), { force: true });
  }
}

/**
 * Writes every chunk to the cache file and, while it is there, to a live
 * client; waits for both to drain. A client that goes away is dropped, the
 * file keeps filling.
 */
class Tee extends Writable {
  constructor(
    private file: Writable,
    private live: Writable | null,
  ) {
    super({ highWaterMark: 1 << 20 });
    live?.once('close', () => (this.live = null));
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    if (chunk.length === 0) return cb(); // a flush marker (lib/zip-build.ts)
    const waits: Array<Promise<unknown>> = [];
    if (!this.file.write(chunk)) waits.push(once(this.file, 'drain'));
    const live = this.live;
    if (live && !live.destroyed && !live.write(chunk)) waits.push(drainOrClose(live));
    if (waits.length === 0) return cb();
    Promise.all(waits).then(() => cb(), cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    if (this.live && !this.live.destroyed) this.live.end();
    this.file.end(cb);
  }
}

/**
 * Resolves at the client's next 'drain' or 'close', whichever comes first, and
 * removes both listeners (a race of two `once()` calls would leave one behind
 * at every backpressure pause of a long download).
 */
function drainOrClose(w: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      w.off('drain', done);
      w.off('close', done);
      resolve();
    };
    w.on('drain', done);
    w.on('close', done);
  });
}

/** A row's key for resuming a build (its name, type, size and mtime). */
const rowKey = (r: ZipEntryRow): string => entryKey(r.path, r.type, r.size, r.mtime);

// Stored, never deflated: deflate runs at about 65 MB/s a core, below a LAN and far below the disk, so it would set
// the pace of every first click and load a small server's CPU; text is a small part of the bytes of most shared folders.
const stored = (e: ZipEntryRow) => ({ size: e.size, mtime: new Date(e.mtime || Date.now()), compress: false });

/** Hash of every row's path, type, size and mtime: any change to the folder changes it. */
export function fingerprint(rows: ZipEntryRow[]): string {
  const h = createHash('sha256');
  for (const r of rows) h.update(`${r.path}\0${r.type}\0${r.size}\0${r.mtime}\n`);
  return h.digest('hex').slice(0, 20);
}
