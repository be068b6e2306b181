/**
 * A deleted tenant's leftovers (docs/tenants.md, "Step 4: the leftovers"): after the delete's own unit (its
 * storages, people and tombstone), an op removes every row any module still keeps under its id, table by table
 * in batches, yielding between them so other writers get the lock. The tombstone is marked `purged_at` when all
 * are gone; a tombstone without it is queued again at start, so a purge cut off by a restart finishes.
 */
import { AppError } from '../errors';
import { DEFAULT_TENANT, PURGE_ORDER, type TenantPurgeRepo, type TenantScope } from '../db';
import type { JobQueue } from '../jobs';
import type { TenantRecordsRepo } from './tenant-records.repo';

export const TENANT_PURGE_JOB = 'tenant.purge';

declare module '../jobs/types' {
  interface JobPayloads {
    'tenant.purge': { tenant_id: number };
  }
}

/** Rows a statement removes at most: a short write lock even for a tenant of millions of rows. */
const BATCH = 1000;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class TenantPurge {
  constructor(
    private d: {
      repo: TenantPurgeRepo;
      records: Pick<TenantRecordsRepo, 'unpurged' | 'markPurged'>;
      queue: JobQueue;
      /** Rows a statement removes at most (default 1,000; tests use fewer). */
      batch?: number;
    },
  ) {}

  /** Registers the op's handler. An op stopped by shutdown goes back to the queue and resumes. */
  register(): void {
    this.d.queue.register(
      TENANT_PURGE_JOB,
      async (ctx) => {
        const done = await this.run({ tenant_id: ctx.payload.tenant_id }, () => ctx.interrupted() || ctx.signal.aborted);
        if (!done) throw ctx.signal.aborted ? ctx.signal.reason : new AppError('cancelled');
      },
      { concurrency: 1, maxAttempts: 10, governed: 'lane' },
    );
  }

  /** Queues the purge of a deleted tenant (one op per tenant: a second request joins the first). */
  enqueue(t: TenantScope): Promise<unknown> {
    // The op is the installation's: an op of the deleted tenant would be among the rows it removes.
    return this.d.queue.enqueue(TENANT_PURGE_JOB, { tenant_id: t.tenant_id }, { tenant: DEFAULT_TENANT, dedupKey: `${TENANT_PURGE_JOB}:${t.tenant_id}` });
  }

  /** At start: queues every tombstone not purged yet. Returns their ids. */
  async resume(): Promise<number[]> {
    const ids = await this.d.records.unpurged();
    for (const id of ids) await this.enqueue({ tenant_id: id });
    return ids;
  }

  /**
   * Removes the deleted tenant's rows from every scoped table, children first, `batch` rows a unit, then marks
   * its tombstone purged. Checks `stop` before each batch: true, and it returns false with the rest left for the
   * next run (which starts over: what is gone stays gone). The repository refuses tenant 1 and a live tenant.
   */
  async run(t: TenantScope, stop: () => boolean = () => false): Promise<boolean> {
    const batch = this.d.batch ?? BATCH;
    for (const table of PURGE_ORDER) {
      for (;;) {
        if (stop()) return false;
        const n = await this.d.repo.batch(t, table, batch);
        await turn();
        if (n < batch) break;
      }
    }
    await this.d.records.markPurged(t.tenant_id);
    return true;
  }
}
