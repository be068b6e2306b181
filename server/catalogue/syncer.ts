/**
 * Keeps each storage's catalogue in step with its backend: full syncs run as
 * persistent ops (`storage.sync`, one at a time per storage), `poll` storages
 * re-sync at their interval, `fsnotify` storages revalidate the folders their
 * watcher reports (falling back to polling with a logged reason), and any
 * folder a user lists is revalidated when stale; a folder open in a browser is
 * checked at once and, on storages no watcher covers, every 5 s while it
 * stays open; Refresh re-checks one at once. An unreachable storage is
 * marked offline and re-probed every 30 s, so it recovers without a restart.
 *
 * Polling backs off: each poll that changes nothing doubles the wait, up to
 * 8× the storage's interval; a change, or a user opening a folder of the
 * storage, brings it back. A metered storage whose daily request budget is
 * spent gets no background sync (poll or first sync) until the next UTC day
 * and says so in its status reason; user-initiated work (listings, open
 * folders, Refresh, "Sync now") still runs and is still counted.
 */
import { isBusy, type Db } from '../db';
import type { JobQueue, JobContext } from '../jobs';
import type { StorageDriver } from '../storage';
import { AppError, isAppError } from '../errors';
import type { Logger } from '../lib/log';
import type { StoragesRepo, StorageRow } from './storages.repo';
import type { SyncEngine } from './sync';
import { SyncRunsRepo, type RunCounts, type RunRef } from './sync-runs.repo';

export const SYNC_JOB = 'storage.sync';

declare module '../jobs/types' {
  interface JobPayloads {
    [SYNC_JOB]: { storage_id: number; run_id: number };
  }
}
const FOLDER_STALE_MS = 15_000;
const OFFLINE_RETRY_MS = 30_000;
const WATCH_DEBOUNCE_MS = 300;
/** How often folders open in a browser are re-checked on a storage no watcher covers. */
const OPEN_RECHECK_MS = 5_000;
/**
 * ...and on a watched one: inotify drops events when its queue overflows, and a network mount (a NAS
 * share as a local folder) reports none for changes made by other machines.
 */
const WATCHED_RECHECK_MS = 15_000;
/** Unchanged polls of a metered (non-local) storage double its interval up to this factor. */
const MAX_BACKOFF = 8;

/** What the request meter says about background work (catalogue/meter.ts). */
export interface SyncBudget {
  /** Why background sync of the storage must wait now, or null. */
  blocked(id: number): Promise<string | null>;
}

interface Live {
  timer?: NodeJS.Timeout;
  /** Re-arms the poll timer at the current backoff. */
  rearm?: () => void;
  unwatch?: () => void;
  retry?: NodeJS.Timeout;
}

interface FolderCheck {
  at: number;
  /** Entries the folder had at its last check (sets how long a check stays fresh). */
  size: number;
  p: Promise<void>;
  /** The check has finished (the catalogue holds what the backend listed). */
  done?: boolean;
}

const offlineCodes = new Set(['storage_unreachable', 'storage_unavailable', 'timeout']);

export class Syncer {
  private live = new Map<number, Live>();
  private folderChecks = new Map<string, FolderCheck>();
  private paused = false;
  /** Folders open in browsers (`storage:dir` → how many pages have it open). */
  private openFolders = new Map<string, { id: number; dir: string; n: number }>();
  private openTimer?: NodeJS.Timeout;
  /** Polls in a row that changed nothing, per storage (sets the backoff). */
  private unchanged = new Map<number, number>();
  /** The last full run this instance queued per storage: a poll skips only a slot another instance took. */
  private queuedHere = new Map<number, number>();
  /** Full sync runs this process finished since it started, per outcome (the metrics read them). */
  readonly runsFinished = { completed: 0, failed: 0 };
  /** The record of full runs (the admin API reads it here). */
  readonly runs: SyncRunsRepo;

  constructor(
    private db: Db,
    private repo: StoragesRepo,
    private driverFor: (id: number) => Promise<StorageDriver>,
    private engine: SyncEngine,
    private queue: JobQueue,
    private log: Logger,
    private budget?: SyncBudget,
  ) {
    this.runs = new SyncRunsRepo(db);
    queue.register(SYNC_JOB, (ctx) => this.runJob(ctx), { concurrency: 2, maxAttempts: 1, governed: 'lane' });
  }

  /** Starts every enabled storage (boot). */
  async startAll(): Promise<void> {
    for (const s of this.repo.everyTenant()) await this.restart(s.id);
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
  }

  /** Applies a storage's current settings: stops its timers and watcher and starts them again. */
  async restart(id: number): Promise<void> {
    await this.stop(id);
    const s = this.repo.ofAnyTenant(id);
    if (!s || !s.enabled) return;
    const live: Live = {};
    this.live.set(id, live);
    if (!s.last_sync_at && !(await this.overBudget(id))) await this.requestSync(id);
    if (s.sync_mode === 'poll') this.poll(s, live);
    else if (s.sync_mode === 'fsnotify') await this.watch(s, live);
  }

  async stop(id: number): Promise<void> {
    const l = this.live.get(id);
    if (!l) return;
    this.live.delete(id);
    if (l.timer) clearTimeout(l.timer);
    if (l.retry) clearInterval(l.retry);
    l.unwatch?.();
  }

  async stopAll(): Promise<void> {
    for (const id of [...this.live.keys()]) await this.stop(id);
    if (this.openTimer) clearInterval(this.openTimer);
    this.openTimer = undefined;
    this.openFolders.clear();
  }

  /** Queues a full sync; returns its run id (the live run's id when one is already queued or running). */
  async requestSync(id: number): Promise<number> {
    // The op is the storage's tenant's (docs/tenants.md): system work on a storage runs in its tenant.
    const s = this.repo.ofAnyTenant(id);
    if (!s) throw new AppError('not_found', { storage_id: id });
    const run = await this.runs.queue(s);
    if (!run.made) return run.id;
    this.queuedHere.set(id, run.id);
    await this.queue.enqueue(SYNC_JOB, { storage_id: id, run_id: run.id }, { tenant: s, dedupKey: `sync:${id}` });
    return run.id;
  }

  /**
   * Revalidates one folder if it was not checked in the last `freshMs` (15 s
   * by default; longer for big folders: that much per 1,000 entries, at most
   * 10 minutes). `wait`
   * bounds how long the caller waits (listings never wait on a backend walk
   * longer than that; the rest lands as realtime frames).
   */
  async revalidate(id: number, dir: string, waitMs = 0, freshMs = FOLDER_STALE_MS): Promise<void> {
    const key = `${id}:${dir}`;
    const now = Date.now();
    let entry = this.folderChecks.get(key);
    // A big folder costs a full backend listing to check: the bigger it was last time, the longer a check stays fresh.
    const staleMs = entry ? Math.min(freshMs * Math.max(1, Math.ceil(entry.size / 1000)), 10 * 60_000) : 0;
    if (!entry || now - entry.at > staleMs) {
      const check: FolderCheck = { at: now, size: entry?.size ?? 0, p: Promise.resolve() };
      check.p = this.checkFolder(id, dir).then((n) => void ((check.size = n), (check.done = true)));
      entry = check;
      this.folderChecks.set(key, entry);
      if (this.folderChecks.size > 10_000) this.folderChecks.clear();
    }
    if (waitMs > 0) await Promise.race([entry.p, new Promise((r) => setTimeout(r, waitMs).unref())]);
  }

  /**
   * Whether the catalogue's rows of `dir` came from a whole listing of it: the storage's first full sync
   * has finished, or the folder was checked since start. A folder can hold a child before that (a deeper
   * folder's check adds the folders above it), so having children proves nothing.
   */
  listed(id: number, dir: string): boolean {
    return !!this.folderChecks.get(`${id}:${dir}`)?.done || !!this.repo.ofAnyTenant(id)?.last_sync_at;
  }

  /**
   * Re-checks one folder now, whatever its freshness (the Refresh button);
   * resolves when the check is done or after `waitMs`, whichever comes first.
   * Changes are published as `folder.changed` before it resolves.
   */
  async refresh(id: number, dir: string, waitMs: number): Promise<void> {
    await Promise.race([this.revalidateNow(id, dir), new Promise((r) => setTimeout(r, waitMs).unref())]);
  }

  /**
   * A browser opened `dir` (its realtime stream): the folder is checked at
   * once, and while it stays open it is re-checked every 5 s (a big folder
   * less often: 5 s per 1,000 entries), every 15 s when a watcher reports
   * the storage's changes. Returns the function to call when the page closes it.
   */
  openFolder(id: number, dir: string): () => void {
    const key = `${id}:${dir}`;
    this.resetBackoff(id);
    const o = this.openFolders.get(key) ?? { id, dir, n: 0 };
    o.n++;
    this.openFolders.set(key, o);
    void this.revalidateNow(id, dir);
    if (!this.openTimer) {
      this.openTimer = setInterval(() => this.recheckOpen(), OPEN_RECHECK_MS);
      this.openTimer.unref();
    }
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      if (--o.n > 0) return;
      this.openFolders.delete(key);
      if (this.openFolders.size === 0 && this.openTimer) {
        clearInterval(this.openTimer);
        this.openTimer = undefined;
      }
    };
  }

  private recheckOpen(): void {
    if (this.paused) return;
    for (const { id, dir } of this.openFolders.values()) {
      const every = this.live.get(id)?.unwatch ? WATCHED_RECHECK_MS : OPEN_RECHECK_MS;
      void this.revalidate(id, dir, 0, every - 500);
    }
  }

  /** How long the next poll of `id` waits: the interval, doubled per unchanged poll, at most 8×. */
  pollDelayMs(id: number): number {
    const base = (this.repo.ofAnyTenant(id)?.sync_interval_s ?? 900) * 1000;
    return base * Math.min(2 ** (this.unchanged.get(id) ?? 0), MAX_BACKOFF);
  }

  /**
   * One background poll of `id` (what the poll timer runs): a full sync,
   * unless the storage's request budget for today is spent; then the
   * reason goes to the storage's status and nothing is requested.
   */
  async pollNow(id: number): Promise<number | null> {
    if (this.paused || (await this.overBudget(id)) || (await this.polledElsewhere(id))) return null;
    return this.requestSync(id);
  }

  /**
   * Several instances on one PostgreSQL each arm a poll timer per storage: the first whose timer fires
   * takes the slot (its run row is there for all to see) and the others skip it, so a polled storage is
   * looked at once per interval, not once per instance. A recent run this instance queued itself (a
   * "Sync now", its own last poll) never makes it skip.
   */
  private async polledElsewhere(id: number): Promise<boolean> {
    const s = this.repo.ofAnyTenant(id);
    if (this.db.dialect !== 'postgres' || !s) return false;
    const last = await this.runs.lastFullSince(s, new Date(Date.now() - 0.9 * this.pollDelayMs(id)).toISOString());
    return last !== null && last !== this.queuedHere.get(id);
  }

  /** True when today's request budget is spent; the reason then shows in the storage's status. */
  private async overBudget(id: number): Promise<boolean> {
    const reason = (await this.budget?.blocked(id)) ?? null;
    const s = this.repo.ofAnyTenant(id);
    if (reason && s && s.status !== 'offline') await this.repo.setStatus(s, id, 'online', reason);
    return reason !== null;
  }

  private poll(s: StorageRow, live: Live): void {
    const arm = () => {
      live.timer = setTimeout(() => {
        // Out of a timer nothing may throw (the process would end): a database away skips this poll only.
        this.pollNow(s.id).catch((e) => this.log.warn(`storage ${s.name}: poll skipped: ${(e as Error).message}`));
        arm();
      }, this.pollDelayMs(s.id));
      live.timer.unref();
    };
    live.rearm = () => {
      if (live.timer) clearTimeout(live.timer);
      arm();
    };
    arm();
  }

  /** Back to the storage's own interval (a change was seen, or a user opened one of its folders). */
  private resetBackoff(id: number): void {
    if (!this.unchanged.get(id)) return;
    this.unchanged.delete(id);
    this.live.get(id)?.rearm?.();
  }

  private async watch(s: StorageRow, live: Live): Promise<void> {
    try {
      const driver = await this.driverFor(s.id);
      if (!driver.watch) throw new Error('the driver cannot watch');
      const pending = new Set<string>();
      let t: NodeJS.Timeout | null = null;
      live.unwatch = await driver.watch((paths) => {
        for (const p of paths) pending.add(p);
        if (t) return;
        t = setTimeout(() => {
          t = null;
          const dirs = new Set([...pending].map((p) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '')));
          pending.clear();
          for (const d of dirs) void this.revalidateNow(s.id, d);
        }, WATCH_DEBOUNCE_MS);
        t.unref();
      });
    } catch (e) {
      this.log.warn(
        `storage ${s.name}: file watching unavailable, polling every ${s.sync_interval_s}s instead: ${isAppError(e) ? (e.params.reason ?? e.message) : (e as Error).message}`,
      );
      this.poll(s, live);
    }
  }

  /** Records a folder as checked at `at` with `size` entries, unless a later check is known. */
  private checkedAt(id: number, dir: string, size: number, at: number): void {
    const key = `${id}:${dir}`;
    if ((this.folderChecks.get(key)?.at ?? 0) > at) return;
    this.folderChecks.set(key, { at, size, p: Promise.resolve(), done: true });
    if (this.folderChecks.size > 10_000) this.folderChecks.clear();
  }

  private revalidateNow(id: number, dir: string): Promise<void> {
    const check: FolderCheck = { at: Date.now(), size: this.folderChecks.get(`${id}:${dir}`)?.size ?? 0, p: Promise.resolve() };
    check.p = this.checkFolder(id, dir).then((n) => void ((check.size = n), (check.done = true)));
    this.folderChecks.set(`${id}:${dir}`, check);
    return check.p;
  }

  /** Revalidates one folder; resolves with its number of entries (0 when it could not be listed). */
  private async checkFolder(id: number, dir: string): Promise<number> {
    try {
      const driver = await this.driverFor(id);
      const s = this.repo.ofAnyTenant(id);
      if (!s) return 0; // removed meanwhile
      const counts = await this.engine.folder(s, driver, dir);
      await this.online(id);
      return counts.seen;
    } catch (e) {
      // A database held by another program is no outage of the storage: the next check catches up.
      if (isBusy(e)) return 0;
      // A folder deleted meanwhile is removed by the parent's revalidation; only outages mark the storage.
      if (isAppError(e) && e.code === 'not_found') {
        const parent = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
        if (dir !== '') void this.revalidateNow(id, parent);
        return 0;
      }
      // Recording the outage can fail too (the database closed under a stopping server): never a rejection,
      // as the watcher, the open folders and the offline retry start checks they do not wait for.
      await this.offline(id, e).catch((err) => isBusy(err) || this.log.warn(`storage ${id}: its status could not be recorded`, err));
      return 0;
    }
  }

  private async runJob(ctx: JobContext<{ storage_id: number; run_id: number }>): Promise<unknown> {
    const { storage_id: id, run_id: runId } = ctx.payload;
    const s = this.repo.ofAnyTenant(id);
    // A removed storage took its runs along: nothing is left to record.
    const run: RunRef | undefined = s && { tenant_id: s.tenant_id, id: runId };
    const finish = async (status: 'completed' | 'failed', c: RunCounts, message: string | null) => {
      if (run) await this.runs.finish(run, status, c, message);
      this.runsFinished[status]++;
    };
    if (!s || !run || !s.enabled) {
      await finish('failed', { added: 0, updated: 0, removed: 0, errors: 0, seen: 0 }, 'storage removed or disabled');
      return null;
    }
    await this.runs.start(run);
    const t0 = Date.now();
    try {
      const driver = await this.driverFor(id);
      const big: Array<[string, number]> = [];
      const counts = await this.engine.full(s, driver, runId, ctx.signal, (dir, n) => big.push([dir, n]));
      // The walk listed these folders whole: each counts as checked when the run started (a listing's first
      // look at a 100,000-entry folder right after the sync re-read it all beside its pages: issue 38).
      for (const [dir, n] of big) this.checkedAt(id, dir, n, t0);
      // The storage's state first: whoever sees the run finished sees the storage as it left it.
      await this.repo.markSynced(s, id);
      await this.online(id);
      await finish('completed', counts, null);
      if (counts.added + counts.updated + counts.removed > 0) this.resetBackoff(id);
      // Only metered backends back off: a local poll costs nothing, and files added on disk must show up on time.
      else if (s.driver !== 'local') this.unchanged.set(id, (this.unchanged.get(id) ?? 0) + 1);
      this.log.info(
        `sync of ${s.name}: +${counts.added} ~${counts.updated} -${counts.removed}, ${counts.errors} errors, ${counts.seen} entries in ${Date.now() - t0} ms`,
      );
      return counts;
    } catch (e) {
      const reason = isAppError(e) ? String(e.params.reason ?? e.message) : (e as Error).message;
      const errs = await this.runs.failure(run, isAppError(e) ? e.code : 'internal', reason);
      try {
        await this.offline(id, e);
      } finally {
        await finish('failed', { added: 0, updated: 0, removed: 0, errors: errs, seen: 0 }, reason);
      }
      this.log.warn(`sync of ${s.name} failed: ${reason}`);
      return null;
    }
  }

  /** A storage's status, written in its row's tenant (system work holds only the id it was started with). */
  private async status(id: number, status: 'online' | 'offline', reason: string | null): Promise<void> {
    const s = this.repo.ofAnyTenant(id);
    if (s) await this.repo.setStatus(s, id, status, reason);
  }

  private async online(id: number): Promise<void> {
    // Online, but a spent budget stays visible until the next day.
    await this.status(id, 'online', (await this.budget?.blocked(id)) ?? null);
    const l = this.live.get(id);
    if (l?.retry) {
      clearInterval(l.retry);
      l.retry = undefined;
    }
  }

  private async offline(id: number, e: unknown): Promise<void> {
    if (!isAppError(e) || !offlineCodes.has(e.code)) return;
    await this.status(id, 'offline', String(e.params.reason ?? e.message));
    const l = this.live.get(id);
    if (l && !l.retry) {
      l.retry = setInterval(() => void this.checkFolder(id, ''), OFFLINE_RETRY_MS);
      l.retry.unref();
    }
  }
}
