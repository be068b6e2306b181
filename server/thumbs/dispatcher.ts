/**
 * Dispatch after writes. The write-gate hook moves a written file to
 * `pending` and puts it on an in-memory backlog; one low-priority `thumb` op
 * drains up to a batch of the backlog with THUMB_CONCURRENCY lanes and queues
 * its successor while work remains.
 *
 * One op per batch, not per file: picking, claiming and finishing an op cost
 * about a fifth of a JPEG thumbnail's CPU, all of it on the event loop. The
 * batch bound keeps pausing background work and higher-priority ops
 * responsive. The backlog is lost on a crash, the op row is not: the first
 * drain after a boot recovers the backlog from the `pending` rows once.
 */
import type { JobQueue } from '../jobs';
import type { WriteHook, WriteOrigin } from '../catalogue';
import { runLanes, tally, THUMB_CONCURRENCY, DEFAULT_TIMEOUT_MS, UPLOAD_TIMEOUT_MS, type ThumbService, type BackfillSummary } from './thumbs.service';

export const THUMB_JOB = 'thumb';
const THUMB_PRIORITY = -1;
/** A drain op stops taking files after this many, or after BATCH_MS, and hands over to a successor op. */
const BATCH_FILES = 64;
const BATCH_MS = 30_000;
const BROWSER_ORIGINS = new Set<WriteOrigin>(['upload', 'drop']);

/** The result of one drain op. */
export interface DrainResult extends BackfillSummary {
  /** Bytes pulled through storage drivers for the whole batch. */
  bytes_read: number;
}

export class ThumbDispatcher {
  /** node id → per-file timeout, in write order. */
  private backlog = new Map<number, number>();
  private opQueued = false;
  private recovered = false;

  constructor(
    private thumbs: ThumbService,
    private queue: JobQueue,
  ) {}

  /** Registers the `thumb` op kind: one drain at a time (it runs its own lanes), one attempt. */
  register(): void {
    this.queue.register(THUMB_JOB, (ctx) => this.drain(ctx.signal), { concurrency: 1, maxAttempts: 1 });
  }

  /**
   * The write-gate hook: a written file whose thumbnail is not `ready` goes to
   * `pending` and onto the backlog, and a drain op is queued unless one is
   * already waiting. Never throws, never waits.
   */
  hook(): WriteHook {
    return (node, info) => {
      if (node.type !== 'file' || node.thumb_state === 'ready') return;
      if (!this.thumbs.repo.markPending(node.id)) return;
      this.backlog.set(node.id, BROWSER_ORIGINS.has(info.origin) ? UPLOAD_TIMEOUT_MS : DEFAULT_TIMEOUT_MS);
      this.request();
    };
  }

  /** Files waiting in this process (for tests and the bench). */
  get waiting(): number {
    return this.backlog.size;
  }

  private request(): void {
    if (this.opQueued) return;
    this.opQueued = true;
    this.queue.enqueue(THUMB_JOB, {}, { priority: THUMB_PRIORITY });
  }

  /**
   * Runs one batch of the backlog. Resolves with the batch's counts; a
   * cancelled or interrupted run puts its unfinished files back and rejects
   * with the signal's reason.
   */
  async drain(signal: AbortSignal): Promise<DrainResult> {
    // A write from now on must queue a new op: this one may already be past the file it adds.
    this.opQueued = false;
    if (!this.recovered) {
      this.recovered = true;
      for (const id of this.thumbs.repo.pendingIds()) if (!this.backlog.has(id)) this.backlog.set(id, DEFAULT_TIMEOUT_MS);
    }
    const result: DrainResult = { processed: 0, ok: 0, failed: 0, skipped: 0, bytes_read: 0 };
    const until = Date.now() + BATCH_MS;
    let taken = 0;
    const next = (): [number, number] | null => {
      if (signal.aborted || taken >= BATCH_FILES || Date.now() > until) return null;
      const first = this.backlog.entries().next();
      if (first.done) return null;
      this.backlog.delete(first.value[0]);
      taken++;
      return first.value;
    };
    try {
      await runLanes(THUMB_CONCURRENCY, next, async ([id, timeoutMs]) => {
        try {
          const r = await this.thumbs.run(id, signal, timeoutMs);
          result.bytes_read += r.bytes_read;
          tally(result, r);
        } catch (e) {
          this.backlog.set(id, timeoutMs);
          throw e;
        }
      });
    } finally {
      if (this.backlog.size > 0 && !signal.aborted) this.request();
    }
    return result;
  }
}
