/**
 * Dispatch of thumbnail work. The hooks (a write through the gate, a file the
 * sync walk found new or changed) move a file to `pending` and make sure one
 * low-priority `thumb` op is queued; the op drains up to a batch with
 * THUMB_CONCURRENCY lanes, each file under a lane of the governor, and queues
 * its successor while work remains.
 *
 * The backlog is durable: `pending` rows in the catalogue, paged by id. Files
 * written by a browser upload are also kept in a small in-memory list so they
 * go first and with the shorter upload timeout; a sync that finds 200,000
 * photos adds nothing to memory. A restart loses nothing: the rows stay
 * `pending` and the next drain pages them.
 *
 * One op per batch, not per file: picking, claiming and finishing an op cost
 * about a fifth of a JPEG thumbnail's CPU, all of it on the event loop. The
 * batch bound keeps pausing background work and higher-priority ops
 * responsive.
 */
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { Governor, JobQueue } from '../jobs';
import type { SyncFilesHook, ThumbStates, WriteHook, WriteOrigin } from '../catalogue';
import { kindOf } from './kinds';
import { runLanes, tally, THUMB_CONCURRENCY, DEFAULT_TIMEOUT_MS, UPLOAD_TIMEOUT_MS, type ThumbService, type BackfillSummary } from './thumbs.service';

export const THUMB_JOB = 'thumb';

declare module '../jobs/types' {
  interface JobPayloads {
    [THUMB_JOB]: Record<string, never>;
  }
}

const THUMB_PRIORITY = -1;
/** A drain op stops taking files after this many, or after BATCH_MS, and hands over to a successor op. */
const BATCH_FILES = 64;
const BATCH_MS = 30_000;
const BROWSER_ORIGINS = new Set<WriteOrigin>(['upload', 'drop']);
/** Upload-first entries kept in memory at most; beyond it they wait in the durable backlog like the rest. */
const FAST_LANE_MAX = 10_000;
/**
 * What the sync walk finds is worth a thumbnail without asking: pictures, films, sound, PDFs and office
 * documents, so a file copied onto the disk gets the same first-page tile as an upload (issue 39).
 */
const SYNC_KINDS = new Set(['image', 'video', 'audio', 'pdf', 'office', 'svg']);

/** The result of one drain op. */
export interface DrainResult extends BackfillSummary {
  /** Bytes pulled through storage drivers for the whole batch. */
  bytes_read: number;
}

export class ThumbDispatcher {
  /** Browser uploads, in write order: they go before the durable backlog. */
  private fast = new Set<number>();
  private opQueued = false;
  /** Where paging of the durable backlog goes on (it restarts from 0 when it runs dry). */
  private cursor = 0;

  constructor(
    private states: ThumbStates,
    /** Every tenant that has a storage (`StoragesRepo.tenants`, no query): the files the drain covers. */
    private tenants: () => TenantScope[],
    private queue: JobQueue,
    private governor: Governor,
  ) {}

  /** Registers the drain op: one at a time, one attempt; it takes a governor lane per file, not per op. */
  register(thumbs: ThumbService): void {
    this.queue.register(THUMB_JOB, (ctx) => this.drain(thumbs, ctx.signal), { concurrency: 1, maxAttempts: 1, governed: 'inside' });
  }

  /**
   * The write-gate hook: a written file whose thumbnail is not `ready` goes to
   * `pending` (one conditional statement) and a drain op is queued unless one
   * is already waiting.
   */
  writeHook(): WriteHook {
    return async (node, info) => {
      if (node.type !== 'file' || node.thumb_state === 'ready') return;
      if (!(await this.states.markPending(node))) return;
      if (BROWSER_ORIGINS.has(info.origin) && this.fast.size < FAST_LANE_MAX) this.fast.add(node.id);
      await this.request();
    };
  }

  /**
   * The sync engine's hook: new or changed pictures, films, sound, PDFs and office documents get thumbnails
   * on their own; the whole sync batch goes to `pending` in one unit.
   */
  syncHook(): SyncFilesHook {
    return async (_storageId, files) => {
      const wanted = files.filter((f) => SYNC_KINDS.has(kindOf(f.mime, f.path.slice(f.path.lastIndexOf('/') + 1)))).map((f) => f.id);
      if (wanted.length && (await this.states.markPendingMany(this.tenants(), wanted)).length) await this.request();
    };
  }

  /** Files waiting for the upload-first lane in this process (for tests and the bench). */
  get waiting(): number {
    return this.fast.size;
  }

  private async request(): Promise<void> {
    if (this.opQueued) return;
    this.opQueued = true;
    try {
      // One drain for the installation (every tenant's files): the installation's own op, tenant 1's.
      await this.queue.enqueue(THUMB_JOB, {}, { tenant: DEFAULT_TENANT, priority: THUMB_PRIORITY });
    } catch (e) {
      this.opQueued = false; // not queued: the next write asks again
      throw e;
    }
  }

  /**
   * Runs one batch: upload-first files, then the durable backlog. Resolves
   * with the batch's counts; a cancelled or interrupted run leaves its
   * unfinished files `pending` and rejects with the signal's reason.
   */
  async drain(thumbs: ThumbService, signal: AbortSignal): Promise<DrainResult> {
    // A write from now on must queue a new op: this one may already be past the file it adds.
    this.opQueued = false;
    const result: DrainResult = { processed: 0, ok: 0, failed: 0, skipped: 0, bytes_read: 0 };
    const until = Date.now() + BATCH_MS;
    const batch: Array<[number, number]> = [];
    for (const id of this.fast) {
      if (batch.length >= BATCH_FILES) break;
      this.fast.delete(id);
      batch.push([id, UPLOAD_TIMEOUT_MS]);
    }
    if (batch.length < BATCH_FILES) {
      const taken = new Set(batch.map(([id]) => id));
      const tenants = this.tenants();
      let page = await this.states.pendingAfter(tenants, this.cursor, BATCH_FILES - batch.length);
      if (page.length === 0 && this.cursor > 0) page = await this.states.pendingAfter(tenants, (this.cursor = 0), BATCH_FILES - batch.length);
      for (const id of page) if (!taken.has(id)) batch.push([id, DEFAULT_TIMEOUT_MS]);
      if (page.length) this.cursor = page[page.length - 1];
    }
    let i = 0;
    const next = (): [number, number] | null => (signal.aborted || Date.now() > until || i >= batch.length ? null : batch[i++]);
    try {
      await runLanes(
        THUMB_CONCURRENCY,
        next,
        async ([id, timeoutMs]) => {
          const r = await thumbs.run(id, signal, timeoutMs);
          result.bytes_read += r.bytes_read;
          tally(result, r);
        },
        () => this.governor.acquire(signal),
      );
    } finally {
      // Work remains when the batch was full or cut short; an empty page means the backlog is dry.
      if (!signal.aborted && (batch.length === BATCH_FILES || i < batch.length || this.fast.size > 0)) await this.request();
    }
    return result;
  }
}
