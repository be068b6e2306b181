/**
 * Name indexing for search, off the sync's hot path: the sync engine inserts
 * node rows only and tells the indexer the smallest new id; the indexer then
 * adds the missing names to the trigram index in small slices, yielding to
 * the event loop between them, so a 200,000-file first sync is not slowed by
 * the index and listings stay responsive meanwhile. Single writes (the write
 * gate) still index at once. A name is searchable shortly after it is synced.
 */
import { isBusy, type Db, type TenantScope } from '../db';
import { SearchIndexRepo } from './search-index.repo';

const SLICE = 500;
const QUIET_MS = 300;
/** How soon a pass resumes after the database was held by another program. */
const BUSY_RETRY_MS = 250;

export class SearchIndexer {
  private from = Number.POSITIVE_INFINITY;
  private running: Promise<void> | null = null;
  private lastKick = 0;
  private stopped = false;
  private repo: SearchIndexRepo;

  /** `tenants`: every tenant that has a storage (the storages' copy: no query); their nodes are indexed. */
  constructor(
    db: Db,
    private tenants: () => TenantScope[],
    private log: (msg: string, err?: unknown) => void = () => {},
  ) {
    this.repo = new SearchIndexRepo(db);
  }

  /** Nodes from id `fromId` up may be missing from the index: schedule a pass. */
  kick(fromId = 0): void {
    if (this.stopped) return;
    this.from = Math.min(this.from, fromId);
    this.lastKick = Date.now();
    if (!this.running) this.running = this.pass().finally(() => (this.running = null));
  }

  /** Resolves when no pass is running (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops indexing before the database closes (what is left is indexed at the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private async pass(): Promise<void> {
    // Let a running sync finish its batches first: index once the kicks pause.
    do await new Promise((r) => setTimeout(r, QUIET_MS));
    while (Date.now() - this.lastKick < QUIET_MS && !this.stopped);
    while (Number.isFinite(this.from) && !this.stopped) {
      let at = this.from;
      this.from = Number.POSITIVE_INFINITY;
      try {
        const tenants = this.tenants();
        const max = await this.repo.maxNodeId(tenants);
        while (at <= max && !this.stopped) {
          await this.repo.indexSlice(tenants, at, at + SLICE);
          at += SLICE;
          await new Promise((r) => setImmediate(r));
        }
      } catch (e) {
        if (isBusy(e)) {
          // Held by another program: resume from the same slice shortly; no name is skipped.
          this.from = Math.min(this.from, at);
          await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
          continue;
        }
        this.log('search indexing failed', e);
        return;
      }
    }
  }
}
