/**
 * Text extraction's part of a metered storage's daily request budget
 * (catalogue/meter.ts): it reads only while the day's LIST+HEAD+GET count,
 * everyone's, is below TEXT_BUDGET_SHARE of the budget, so browsing and
 * sync always keep the rest. Each file is checked against its format's
 * usual cost before it is started, and each read against one request
 * before it is sent: a file whose reads would pass the share stops where it
 * is and waits (its row stays `pending`) until the next UTC day or a
 * changed budget. Storages with no budget (and local disks) never wait.
 */
import type { BudgetDay } from '../catalogue';
import type { TextFormat } from './extract';

/** The part of a storage's daily budget text extraction may take (the day's count it stops at). */
export const TEXT_BUDGET_SHARE = 0.5;

/**
 * Requests one file usually costs on a remote storage: one ranged GET for text, HTML, a PDF or a picture
 * (copied whole); an office document reads the ZIP's end records, its directory and a 1 MiB block holding
 * the text parts (one GET more per text part past that block or larger than 1 MiB); a song or a video is
 * read by its head and its tail (media-meta.ts); a legacy office file or a mail is copied whole (one).
 */
const USUAL_COST: Partial<Record<TextFormat, number>> = { docx: 3, xlsx: 3, pptx: 3, odf: 3, media: 2 };

/** One request unless the format is known to need more (a format read by one ranged read or one copy costs one). */
export const usualCost = (format: TextFormat | null): number => (format && USUAL_COST[format]) || 1;

/** Where the day's count and budget come from (the request meter). */
export interface BudgetBooks {
  today(storageId: number): Promise<BudgetDay | null>;
}

/** Why extraction on a storage waits: the day's count against extraction's limit, and when a new day starts. */
export interface BudgetWait {
  used: number;
  /** TEXT_BUDGET_SHARE of the budget. */
  limit: number;
  budget: number;
  /** The UTC date of the next day (its budget is fresh). */
  until: string;
  /** Milliseconds until then by the meter's clock. */
  retry_ms: number;
}

/** A read refused because it would pass extraction's share: the file waits, it has not failed. */
export class BudgetSpent extends Error {
  constructor(readonly wait: BudgetWait) {
    super(`text extraction's share of the request budget is spent (${wait.used} of ${wait.limit})`);
  }
}

type Read<A extends unknown[], R> = (...a: A) => Promise<R>;

export class TextBudget {
  /** Reads sent and not yet known to the meter's count, per storage. */
  private inFlight = new Map<number, number>();

  constructor(private books: BudgetBooks | null) {}

  /** Why extraction on `storageId` must wait before spending `cost` more requests, or null. */
  async wait(storageId: number, cost: number): Promise<BudgetWait | null> {
    const day = await this.books?.today(storageId);
    return day ? this.over(storageId, day, cost) : null;
  }

  /**
   * `read` taking one request of the share each time: refused with BudgetSpent, before anything is sent,
   * when none is left. A read is in flight until it resolves (drivers count a request when its answer comes,
   * before they resolve), and the check reads the meter's live count and the reads in flight in one
   * synchronous step, so two lanes never take the last request twice.
   */
  guard<A extends unknown[], R>(storageId: number, read: Read<A, R>): Read<A, R> {
    return async (...a: A) => {
      const day = await this.books?.today(storageId);
      const w = day ? this.over(storageId, day, 1) : null;
      if (w) throw new BudgetSpent(w);
      if (!day) return read(...a);
      this.inFlight.set(storageId, (this.inFlight.get(storageId) ?? 0) + 1);
      try {
        return await read(...a);
      } finally {
        const n = (this.inFlight.get(storageId) ?? 1) - 1;
        if (n > 0) this.inFlight.set(storageId, n);
        else this.inFlight.delete(storageId);
      }
    };
  }

  private over(storageId: number, day: BudgetDay, cost: number): BudgetWait | null {
    const limit = Math.floor(day.budget * TEXT_BUDGET_SHARE);
    const used = day.used;
    if (used + (this.inFlight.get(storageId) ?? 0) + cost <= limit) return null;
    return { used, limit, budget: day.budget, until: day.next_day, retry_ms: day.resets_in_ms };
  }
}
