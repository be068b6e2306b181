/**
 * The thumbnail state machine and the runs behind it: `run` generates one
 * file's thumbnail, `backfill` (CLI) walks the catalogue, `sweep` removes
 * orphaned cache files; dispatch after writes is in dispatcher.ts. A run moves
 * a file from `pending` to `ready` (the JPEG is in `<cache_dir>/<node_id>.jpg`),
 * `skipped` (no generator applies) or `failed` (the error text is kept);
 * `ready` is never re-run.
 */
import { mkdir, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db, TenantScope } from '../db';
import { ThumbStates, type ThumbNode, type ThumbState } from '../catalogue';
import type { EventBus } from '../events';
import type { StorageOps } from '../files/internal';
import type { Logger } from '../lib/log';
import { isAppError } from '../errors';
import { kindOf, type ThumbKind } from './kinds';
import { ByteCounter, openSource } from './source';
import { render } from './generators';
import { thumbTools, type ThumbTools } from './tools';
import { parentRel } from '../lib/paths';
import { lowerThreadsNamed } from '../lib/proc-cpu';

/** Browser uploads get 90 s; staged, REST, protocol and backfill paths 2 minutes. */
export const UPLOAD_TIMEOUT_MS = 90_000;
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Parallel generator runs in the server: bounded so thumbnails never take every core from requests. */
export const THUMB_CONCURRENCY = 2;
/** Sweeper: files younger than this are never removed (a run may be renaming one in). */
const SWEEP_MIN_AGE_MS = 10 * 60_000;
const MAX_IMAGE_BYTES = 50 * 1024 * 1024;
const MAX_SVG_BYTES = 10 * 1024 * 1024;
const MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024;
const THUMB_FILE = /^(\d{1,15})\.jpg$/;
/** What libvips names its worker threads (Linux `comm`). */
const LIBVIPS_THREAD = 'libvips worker';

export interface Outcome {
  id: number;
  state: ThumbState | 'gone';
  error?: string;
  /** Bytes pulled through the storage driver (0 when a local file was opened in place). */
  bytes_read: number;
}

export interface BackfillOptions {
  storageId?: number;
  limit?: number;
  retryFailed?: boolean;
  retrySkipped?: boolean;
  concurrency?: number;
  progressEvery?: number;
  onProgress?: (s: BackfillSummary) => void;
  signal?: AbortSignal;
  /** The governor's lane for each file (none: `concurrency` alone bounds the run). */
  slot?: Slot;
}

export interface BackfillSummary {
  processed: number;
  ok: number;
  failed: number;
  skipped: number;
}

export class ThumbService {
  readonly repo: ThumbStates;
  /** Thumbnails finished by this process since it started, per outcome (the metrics read them). */
  readonly outcomes: Record<Exclude<ThumbState, 'pending'>, number> = { ready: 0, failed: 0, skipped: 0 };

  constructor(
    db: Db,
    private ops: StorageOps,
    private bus: EventBus,
    /** The tenant of a storage's changes (its row's): the folder's change is announced in it. */
    private tenantOf: (storageId: number) => TenantScope,
    /** The tenants whose files get thumbnails: every tenant that has a storage (`StoragesRepo.tenants`, no query). */
    readonly tenants: () => TenantScope[],
    readonly cacheDir: string,
    private log: Logger,
    private tools: () => ThumbTools = thumbTools,
  ) {
    this.repo = new ThumbStates(db);
  }

  /** `<cache_dir>/<node_id>.jpg` */
  cachePath(id: number): string {
    return join(this.cacheDir, `${id}.jpg`);
  }

  /**
   * Generates one file's thumbnail and records the state. Resolves with the
   * outcome (`gone` when the node no longer exists); throws only when the cache
   * folder or the database fails, which is an infrastructure error.
   */
  async run(id: number, signal: AbortSignal, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Outcome> {
    const node = await this.repo.byId(this.tenants(), id);
    if (!node || node.deleted_at || node.type !== 'file') return { id, state: 'gone', bytes_read: 0 };
    if (node.thumb_state === 'ready') return { id, state: 'ready', bytes_read: 0 };
    await this.repo.markPending(node);
    const bounded = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    const workDir = join(this.cacheDir, '.work', `${id}-${randomBytes(4).toString('hex')}`);
    await mkdir(workDir, { recursive: true });
    const counter = new ByteCounter();
    let state: Exclude<ThumbState, 'pending'>;
    let error: string | null = null;
    try {
      const result = await this.generate(node, workDir, counter, bounded);
      if (result === 'skipped') state = 'skipped';
      else {
        await rename(result, this.cachePath(id));
        state = 'ready';
      }
    } catch (e) {
      if (signal.aborted) throw signal.reason; // cancelled or shutting down: leave it pending for the next run
      state = 'failed';
      error = bounded.aborted ? `timed out after ${Math.round(timeoutMs / 1000)} s` : describe(e);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
    await this.repo.finish(node, state, error, node);
    this.outcomes[state]++;
    // A ready thumbnail changes what its folder's listing shows: cached pages refresh and open browsers reload the row.
    if (state === 'ready')
      await this.bus.emit(this.tenantOf(node.storage_id), 'folder.changed', {
        storage_id: node.storage_id,
        folder: parentRel(node.path),
        kind: 'updated',
        path: node.path,
        name: node.name,
      });
    this.log.debug(`thumbnail ${id} ${state}${error ? `: ${error}` : ''} (${counter.bytes} bytes read)`);
    return { id, state, ...(error ? { error } : {}), bytes_read: counter.bytes };
  }

  private async generate(node: ThumbNode, workDir: string, counter: ByteCounter, signal: AbortSignal): Promise<string | 'skipped'> {
    const kind: ThumbKind = kindOf(node.mime, node.name);
    const tools = this.tools();
    if (kind === 'heif') throw new Error('HEIC and AVIF images are not supported');
    if (kind === 'svg' && !tools.svg) return 'skipped';
    if (kind === 'image' && node.size > MAX_IMAGE_BYTES) throw new Error(`image larger than ${MAX_IMAGE_BYTES / 1048576} MB`);
    if (kind === 'svg' && node.size > MAX_SVG_BYTES) throw new Error(`svg larger than ${MAX_SVG_BYTES / 1048576} MB`);
    const place = { storage_id: node.storage_id, rel: node.path };
    const reader = {
      read: (range?: { start: number; end?: number }, s?: AbortSignal) => this.ops.read(place, range, s),
      localFile: () => this.ops.localFile(place),
    };
    // The placeholder needs no bytes at all.
    const needsInput = kind !== 'other';
    const source = needsInput
      ? await openSource({ reader, name: node.name, size: node.size, kind, mime: node.mime }, workDir, counter, signal, MAX_DOWNLOAD_BYTES)
      : { close: async () => {} };
    try {
      const r = await render({ kind, name: node.name, source, workDir, tools, signal });
      return r === 'skipped' ? r : r.file;
    } finally {
      await source.close();
      // sharp decodes on libvips's own worker threads: at low priority the event loop wins the cores from them.
      lowerThreadsNamed(LIBVIPS_THREAD);
    }
  }

  /**
   * Walks file nodes (trashed and soft-deleted ones excluded) and runs the
   * generator for each that has no thumbnail yet, plus `failed` / `skipped`
   * ones when asked; `ready` ones are never re-run. Infrastructure errors reject.
   */
  async backfill(o: BackfillOptions = {}): Promise<BackfillSummary> {
    const summary: BackfillSummary = { processed: 0, ok: 0, failed: 0, skipped: 0 };
    const limit = o.limit ?? Infinity;
    const every = o.progressEvery ?? 25;
    const signal = o.signal ?? new AbortController().signal;
    let afterId = 0;
    let batch: ThumbNode[] = [];
    let dry = false;
    let paging: Promise<void> | null = null;
    let taken = 0;
    const page = async () => {
      batch = await this.repo.candidates({
        tenants: this.tenants(),
        storageId: o.storageId,
        retryFailed: !!o.retryFailed,
        retrySkipped: !!o.retrySkipped,
        afterId,
        limit: 200,
      });
      if (batch.length === 0) dry = true;
      else afterId = batch[batch.length - 1].id;
    };
    const next = async (): Promise<ThumbNode | null> => {
      for (;;) {
        if (taken >= limit || signal.aborted || (dry && batch.length === 0)) return null;
        if (batch.length) {
          taken++;
          return batch.shift()!;
        }
        // One lane reads the next page; lanes that find the batch empty meanwhile wait for it, not read it again.
        await (paging ??= page().finally(() => (paging = null)));
      }
    };
    await runLanes(
      Math.max(1, o.concurrency ?? 4),
      next,
      async (n) => {
        const before = summary.processed;
        tally(summary, await this.run(n.id, signal, DEFAULT_TIMEOUT_MS));
        if (every > 0 && summary.processed > before && summary.processed % every === 0) o.onProgress?.({ ...summary });
      },
      o.slot,
    );
    return summary;
  }

  /**
   * Deletes cached `<digits>.jpg` files older than 10 minutes whose node is
   * positively absent. When the database cannot answer, nothing is deleted.
   * Returns the number of files removed.
   */
  async sweep(now: number = Date.now()): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.cacheDir);
    } catch {
      return 0;
    }
    const old: number[] = [];
    for (const name of names) {
      const m = THUMB_FILE.exec(name);
      if (!m) continue;
      try {
        if (now - (await stat(join(this.cacheDir, name))).mtimeMs >= SWEEP_MIN_AGE_MS) old.push(Number(m[1]));
      } catch {
        /* removed meanwhile */
      }
    }
    if (old.length === 0) return 0;
    let present: Set<number>;
    try {
      present = await this.repo.existing(this.tenants(), old);
    } catch (e) {
      this.log.warn('thumbnail sweep: the database did not answer; nothing deleted', e);
      return 0;
    }
    const absent = old.filter((id) => !present.has(id));
    await this.remove(absent);
    return absent.length;
  }

  /** Removes the cached thumbnails of purged nodes at once. Idempotent. */
  remove(ids: number[]): Promise<void> {
    return removeThumbFiles(this.cacheDir, ids);
  }
}

/** Deletes the cached JPEGs of `ids` (purged nodes); missing files are fine. */
export async function removeThumbFiles(cacheDir: string, ids: number[]): Promise<void> {
  await Promise.all(ids.map((id) => unlink(join(cacheDir, `${id}.jpg`)).catch(() => undefined)));
}

/** Adds one outcome to a summary (`gone` files are not counted). */
export function tally(summary: BackfillSummary, r: Outcome): void {
  if (r.state === 'gone') return;
  summary.processed++;
  if (r.state === 'ready') summary.ok++;
  else if (r.state === 'skipped') summary.skipped++;
  else summary.failed++;
}

/** Waits for a lane of the governor (jobs/governor.ts) and resolves with its release. */
export type Slot = () => Promise<() => void>;

/**
 * Runs `work` over the items `next` hands out, `lanes` at a time (each item
 * also under `slot`, the governor's lane, when given), and resolves
 * when `next` returns null and every lane is done. The first failure stops
 * the handing out and rejects once the other lanes have finished.
 */
export async function runLanes<T>(lanes: number, next: () => T | null | Promise<T | null>, work: (item: T) => Promise<void>, slot?: Slot): Promise<void> {
  let failed = false;
  const lane = async () => {
    for (;;) {
      // The governor's lane is taken before the item, so a lane waiting for it holds no file.
      const release = slot ? await slot() : null;
      try {
        const item = failed ? null : await next();
        if (item === null) return;
        await work(item);
      } catch (e) {
        failed = true;
        throw e;
      } finally {
        release?.();
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: lanes }, lane));
  const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
}

function describe(e: unknown): string {
  if (isAppError(e)) return `${e.code}${e.params.reason ? `: ${e.params.reason}` : ''}`;
  return e instanceof Error ? e.message : String(e);
}
