/**
 * Text extraction as background work. The hooks (a write through the gate, a
 * file the sync walk found new or changed) send an eligible file's version to
 * `pending` (catalogue/text-extracts.repo.ts: the same version twice changes
 * nothing) and make sure one low-priority `text.extract` op is queued; the op
 * drains a batch, two files at a time, each under a lane of the governor, and queues
 * its successor while work remains. The backlog is the `pending` rows, so a
 * restart loses nothing: an interrupted op resumes, and `resume()` queues one
 * at start for rows a crash left without an op. A metered storage whose
 * budget has no room left for extraction (budget.ts) is left out of the
 * drain, its files still waiting, and a wake-up op is queued for when the
 * budget may allow again (the next day, at most an hour ahead).
 */
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { ExtractOutcome, PendingText, StorageRef, StorageTextStatus, SyncFilesHook, TextExtractsRepo, WriteHook } from '../catalogue';
import type { StorageOps } from '../files/internal';
import type { Governor, JobQueue } from '../jobs';
import { BudgetSpent, TextBudget, usualCost, type BudgetBooks, type BudgetWait } from './budget';
import { ExtractError } from './errors';
import { extractText, TEXT_CAP, textFormatOf, wantsText, type FileSource } from './extract';
import { OCR_BELOW_CHARS, OCR_IMAGE_EXTS } from './ocr';

export const TEXT_JOB = 'text.extract';

declare module '../jobs/types' {
  interface JobPayloads {
    [TEXT_JOB]: Record<string, never>;
  }
}

/** Below thumbnails (-1): a picture's tile is seen at once, a document's text only when searched for. */
const TEXT_PRIORITY = -2;
/** A drain op stops taking files after this many, or after BATCH_MS, and hands over to a successor op. */
const BATCH_FILES = 32;
const BATCH_MS = 30_000;
/** Files extracted at once (a PDF's is mostly pdftotext's process: two keep both cores of a small machine in use). */
const TEXT_LANES = 2;
/** Failures listed per storage in the status. */
const STATUS_FAILURES = 5;
/** The wake-up op of storages waiting on their budget: its own key, so it never absorbs a request to drain now. */
const WAKE_KEY = `${TEXT_JOB}:budget`;
/** The wake-up comes a little after the meter's new day, and at least once an hour (a budget changed elsewhere). */
const WAKE_AFTER_MS = 1_000;
const WAKE_MAX_MS = 3_600_000;

export interface TextDrainResult {
  done: number;
  failed: number;
  skipped: number;
  /** Files whose node was gone or changed meanwhile (a changed one is waiting again). */
  stale: number;
  /** Files left waiting because their storage's request budget has no room for them today. */
  waiting: number;
}

/** One storage's extraction state with, while it waits on its request budget, the day's count and its next day. */
export type TextIndexStatus = StorageTextStatus & { waiting_budget: Omit<BudgetWait, 'retry_ms'> | null };

export class TextIndexer {
  /** Where paging of the backlog goes on (it restarts from 0 when it runs dry). */
  private cursor = 0;
  /** Files this process extracted (tests: a rename must not add one). */
  extracted = 0;
  private budget: TextBudget;

  constructor(
    private repo: TextExtractsRepo,
    private queue: JobQueue,
    private governor: Governor,
    /** The storages whatever their tenant (`StoragesRepo`): a file's rows carry its storage's tenant. */
    private storages: { ofAnyTenant(id: number): StorageRef | undefined; tenants(): TenantScope[] },
    /** Where copies of remote PDFs are made (the data dir's staging folder). */
    private workDir: string,
    /** Whether a storage's scans are read by OCR, and in which Tesseract languages. */
    private ocr: { ocrOn: (storageId: number) => boolean; ocrLangs: string } = { ocrOn: () => false, ocrLangs: 'eng' },
    /** The request meter's day per storage (null: no storage is metered, as in unit tests). */
    private books: (BudgetBooks & { budgets(): Promise<Map<number, number>> }) | null = null,
  ) {
    this.budget = new TextBudget(books);
  }

  /**
   * Registers the drain op (one at a time, one attempt; it takes a governor lane per file, not per op) with
   * the storage operations it reads through, which exist only after the catalogue that calls the hooks.
   */
  register(ops: StorageOps): void {
    this.queue.register(TEXT_JOB, (ctx) => this.drain(ops, ctx.signal), { concurrency: 1, maxAttempts: 1, governed: 'inside' });
  }

  /** The write-gate hook: a written eligible file's new version waits for extraction. */
  writeHook(): WriteHook {
    return async (node) => {
      if (node.type !== 'file' || !wantsText(node.path, node.size, node.mime, this.ocr.ocrOn(node.storage_id))) return;
      if ((await this.repo.markPending(node, [node])).length) await this.request();
    };
  }

  /** The sync engine's hook: new or changed eligible files of the batch wait for extraction, in one unit. */
  syncHook(): SyncFilesHook {
    return async (storageId, files) => {
      const s = this.storages.ofAnyTenant(storageId);
      if (!s) return;
      const ocr = this.ocr.ocrOn(storageId);
      const wanted = files.filter((f) => wantsText(f.path, f.size, f.mime, ocr));
      if (wanted.length && (await this.repo.markPending(s, wanted)).length) await this.request();
    };
  }

  /**
   * Per storage, files indexed, waiting (and whether on the request budget), failed (the newest five with
   * their reasons) and skipped: Admin → Status.
   */
  async status(): Promise<TextIndexStatus[]> {
    const rows = await this.repo.byStorage(this.storages.tenants(), STATUS_FAILURES);
    return Promise.all(
      rows.map(async (r) => {
        const w = r.pending ? await this.budget.wait(r.storage_id, 1) : null;
        return { ...r, waiting_budget: w && { used: w.used, limit: w.limit, budget: w.budget, until: w.until } };
      }),
    );
  }

  /** A storage's budget changed: files waiting on it may go on (the drain looks again). */
  async budgetChanged(): Promise<void> {
    if ((await this.repo.pendingAfter(this.storages.tenants(), 0, 1)).length) await this.request();
  }

  /**
   * OCR was turned on for a storage: its pictures and its PDFs that gave (almost) no text wait for reading,
   * those the drain finds through the catalogue, not only those written from now on.
   */
  async ocrTurnedOn(storageId: number): Promise<void> {
    const s = this.storages.ofAnyTenant(storageId);
    if (s && (await this.repo.markScansPending(s, OCR_IMAGE_EXTS, OCR_BELOW_CHARS)) > 0) await this.request();
  }

  /** Queues a drain when files wait (at start: rows a crash left between their hook and the op's queueing). */
  async resume(): Promise<void> {
    if ((await this.repo.pendingAfter(this.storages.tenants(), 0, 1)).length) await this.request();
  }

  /** One drain op queued, or one more behind a running one (which may have paged past the new file). */
  private async request(): Promise<void> {
    await this.queue.enqueue(TEXT_JOB, {}, { tenant: DEFAULT_TENANT, priority: TEXT_PRIORITY, dedupKey: TEXT_JOB, behindRunning: true });
  }

  /** Queues the wake-up op of storages waiting on their budget (one, however many drains ask). */
  private async wakeLater(waits: Iterable<BudgetWait>): Promise<void> {
    const ms = Math.min(WAKE_MAX_MS, ...[...waits].map((w) => w.retry_ms + WAKE_AFTER_MS));
    await this.queue.enqueue(
      TEXT_JOB,
      {},
      { tenant: DEFAULT_TENANT, priority: TEXT_PRIORITY, dedupKey: WAKE_KEY, runAt: new Date(Date.now() + Math.max(WAKE_AFTER_MS, ms)) },
    );
  }

  /** The storages with a budget that has no room for one more extraction request now. */
  private async waitingStorages(): Promise<Map<number, BudgetWait>> {
    const out = new Map<number, BudgetWait>();
    for (const [id, perDay] of (await this.books?.budgets()) ?? []) {
      const w = perDay > 0 ? await this.budget.wait(id, 1) : null;
      if (w) out.set(id, w);
    }
    return out;
  }

  /**
   * Runs one batch. A cancelled or interrupted run leaves its unfinished files `pending` and rejects. Files of
   * storages waiting on their budget are not paged at all; a file whose usual cost (or whose next read) would
   * pass its storage's share stays `pending` and leaves its storage's other files alone for this batch.
   */
  async drain(ops: StorageOps, signal: AbortSignal): Promise<TextDrainResult> {
    const result: TextDrainResult = { done: 0, failed: 0, skipped: 0, stale: 0, waiting: 0 };
    const until = Date.now() + BATCH_MS;
    const waits = await this.waitingStorages();
    const except = [...waits.keys()];
    const tenants = this.storages.tenants();
    let page = await this.repo.pendingAfter(tenants, this.cursor, BATCH_FILES, except);
    if (page.length === 0 && this.cursor > 0) page = await this.repo.pendingAfter(tenants, (this.cursor = 0), BATCH_FILES, except);
    let taken = 0;
    let finished = 0;
    // TEXT_LANES files at once, each under a governor lane: the budget, not this loop, bounds the CPU.
    const lane = async () => {
      while (taken < page.length && !signal.aborted && Date.now() < until) {
        const row = page[taken++];
        const wait = waits.get(row.storage_id) ?? (await this.budget.wait(row.storage_id, usualCost(textFormatOf(row.name, row.mime))));
        if (wait) {
          waits.set(row.storage_id, wait);
          result.waiting++;
          finished++;
          continue;
        }
        const release = await this.governor.acquire(signal);
        try {
          result[await this.one(ops, row, signal, waits)]++;
          finished++;
        } finally {
          release();
        }
      }
    };
    try {
      // Both lanes end before the op does (a failure in one must not leave the other running unowned).
      const ends = await Promise.allSettled(Array.from({ length: TEXT_LANES }, lane));
      for (const e of ends) if (e.status === 'rejected') throw e.reason;
      if (finished === page.length && page.length) this.cursor = page[page.length - 1].id;
    } finally {
      // Work remains when the page was full or cut short; files waiting on a budget get the wake-up op.
      if (!signal.aborted && (page.length === BATCH_FILES || finished < page.length)) await this.request();
      if (!signal.aborted && waits.size) await this.wakeLater(waits.values());
    }
    return result;
  }

  /**
   * Extracts one waiting file and records the outcome. A read refused by the budget leaves the file `pending`
   * (whatever the extractor made of the refusal) and its storage in `waits`.
   */
  private async one(ops: StorageOps, row: PendingText, signal: AbortSignal, waits: Map<number, BudgetWait>): Promise<keyof TextDrainResult> {
    if (row.path === null || row.deleted_at !== null) {
      await this.repo.drop(row);
      return 'stale';
    }
    const place = { storage_id: row.storage_id, rel: row.path };
    const guarded = this.budget.guard(row.storage_id, (range: { start: number; end: number }, s?: AbortSignal) => ops.read(place, range, s));
    let refused: BudgetWait | null = null;
    const src: FileSource = {
      name: row.name,
      size: row.size,
      mime: row.mime,
      localFile: () => ops.localFile(place),
      read: (range, s) =>
        guarded(range, s).catch((e: unknown) => {
          if (e instanceof BudgetSpent) refused = e.wait;
          throw e;
        }),
    };
    let outcome: ExtractOutcome;
    try {
      const got = await extractText(src, signal, this.workDir, this.ocr.ocrOn(row.storage_id) ? this.ocr.ocrLangs : null);
      outcome = {
        state: 'done',
        reason: got.capped ? `only the first ${TEXT_CAP} characters (or readable bytes) are indexed` : null,
        text: got.text,
        capped: got.capped,
        meta: got.meta,
        taken: got.taken,
      };
    } catch (e) {
      if (signal.aborted) throw e;
      if (refused) {
        waits.set(row.storage_id, refused);
        return 'waiting';
      }
      const x = ExtractError.from(e, 'extraction failed');
      outcome = { state: x.skip ? 'skipped' : 'failed', reason: x.message, text: null, capped: false };
    }
    this.extracted++;
    const recorded = await this.repo.finish(row, { size: row.size, mtime: row.mtime }, outcome);
    return recorded ? outcome.state : 'stale';
  }
}
