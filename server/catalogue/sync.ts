/**
 * The sync engine: streams a backend's entries, diffs them against the
 * catalogue in batches (one short transaction per batch, never across I/O),
 * records a sync run with counts and per-error detail, and applies the
 * tombstone guard (no delete pass when a run sees under 70 % of the last one).
 */
import type { Db } from '../db';
import type { StorageDriver, WalkEntry } from '../storage';
import { AppError, isAppError } from '../errors';
import { isInternalName, baseName, joinRel, parentRel } from '../lib/paths';
import { NodesRepo } from './nodes.repo';
import { SyncRunsRepo } from './sync-runs.repo';
import { SyncNodesRepo, type Existing, type NewNode } from './sync.repo';
import { mimeOf } from './mime';

const BATCH = 1000;
/** How long a batch waits (off the event loop) for a database held by another program before the run fails. */
const BUSY_WAIT_MS = 60_000;
export const TOMBSTONE_RATIO = 0.7;

export interface SyncCounts {
  added: number;
  updated: number;
  removed: number;
  errors: number;
  seen: number;
}

/** A file a sync batch added or saw change, as the batch wrote it. */
export interface SyncedFile {
  id: number;
  kind: 'added' | 'drifted';
  path: string;
  size: number;
  mtime: number;
  etag: string | null;
  mime: string | null;
}

export interface SyncHooks {
  /** Folders whose content changed (relative paths), after each committed batch. */
  onFoldersChanged?(storageId: number, folders: string[]): void;
  /** Files new to the catalogue or whose content drifted, once per committed batch. */
  onFilesChanged?(storageId: number, files: SyncedFile[]): void;
  /** Entries removed as gone from the backend (the top of each removed subtree), once per committed transaction. */
  onRemoved?(storageId: number, paths: string[]): void;
  /** Rows were inserted; `minId` is the smallest new id (the search indexer catches up from there). */
  onNodesAdded?(minId: number): void;
  /** Before rows are removed as gone from the backend: throws when the backend is not the one the rows came from (a removable drive unplugged). */
  beforeRemove?(storageId: number): Promise<void>;
}

/** A growable bitmap of node ids seen by the current run. */
class IdSet {
  private bits = new Uint8Array(1 << 16);
  size = 0;
  add(id: number): void {
    if (id >> 3 >= this.bits.length) {
      const next = new Uint8Array(Math.max(this.bits.length * 2, (id >> 3) + 1));
      next.set(this.bits);
      this.bits = next;
    }
    const b = 1 << (id & 7);
    if (!(this.bits[id >> 3] & b)) {
      this.bits[id >> 3] |= b;
      this.size++;
    }
  }
  has(id: number): boolean {
    return id >> 3 < this.bits.length && (this.bits[id >> 3] & (1 << (id & 7))) !== 0;
  }
}

const yieldLoop = () => new Promise<void>((r) => setImmediate(r));
const changed = (row: Existing, e: WalkEntry) =>
  row.type !== e.type || (e.type === 'file' && (e.etag && row.etag ? e.etag !== row.etag : row.size !== e.size || row.mtime !== Math.round(e.mtime)));

export class SyncEngine {
  private nodes: NodesRepo;
  private runs: SyncRunsRepo;
  private rows: SyncNodesRepo;

  constructor(
    private db: Db,
    private hooks: SyncHooks = {},
  ) {
    this.nodes = new NodesRepo(db);
    this.runs = new SyncRunsRepo(db);
    this.rows = new SyncNodesRepo(db);
  }

  /**
   * Full walk of a storage into run `runId`. A missing or unreachable root,
   * or a walk that breaks midway, records an errored run and removes nothing.
   */
  async full(storageId: number, driver: StorageDriver, runId: number, signal?: AbortSignal): Promise<SyncCounts> {
    const counts: SyncCounts = { added: 0, updated: 0, removed: 0, errors: 0, seen: 0 };
    const seen = new IdSet();
    const prevCount = this.rows.count(storageId);
    const lastSeen = this.runs.lastSeen(storageId) ?? prevCount;
    const failedDirs: string[] = [];
    const startedAt = new Date().toISOString();
    try {
      const root = await driver.stat('');
      if (root.type !== 'dir') throw new AppError('storage_unavailable', { reason: 'the storage root is not a folder' });
      let batch: WalkEntry[] = [];
      for await (const e of this.entries(driver, storageId, runId, counts, failedDirs, signal)) {
        batch.push(e);
        if (batch.length >= BATCH) {
          await this.apply(storageId, batch, seen, counts, startedAt, prevCount === 0);
          batch = [];
          await yieldLoop();
          signal?.throwIfAborted();
        }
      }
      await this.apply(storageId, batch, seen, counts, startedAt, prevCount === 0);
    } catch (e) {
      this.recordError(runId, '', e);
      counts.errors++;
      throw e;
    }
    counts.seen = seen.size;
    // Tombstone guard: a run that saw far fewer entries than the last one is suspect.
    const base = Math.max(lastSeen, 0);
    if (base > 0 && seen.size < TOMBSTONE_RATIO * base) {
      this.runs.tripGuard(runId, `saw ${seen.size} of ${base} entries: delete pass skipped`);
      return counts;
    }
    // A first sync of an empty catalogue has nothing to tombstone.
    if (prevCount > 0) {
      await this.hooks.beforeRemove?.(storageId);
      counts.removed = await this.deleteUnseen(storageId, seen, failedDirs, startedAt);
    }
    return counts;
  }

  /** Revalidates one folder against the backend (opened folder, ondemand, watcher). Returns whether anything changed. */
  async folder(storageId: number, driver: StorageDriver, dir: string): Promise<SyncCounts> {
    const counts: SyncCounts = { added: 0, updated: 0, removed: 0, errors: 0, seen: 0 };
    const listed: WalkEntry[] = [];
    const startedAt = new Date().toISOString();
    for await (const e of driver.list(dir)) if (!isInternalName(e.name)) listed.push({ ...e, path: joinRel(dir, e.name) });
    const rows = this.rows.dirRows(storageId, dir);
    const names = new Set(listed.map((e) => e.path));
    const seen = new IdSet();
    await this.apply(storageId, [...this.uncataloguedFolders(storageId, dir), ...listed], seen, counts, startedAt);
    const gone = rows.filter((r) => !names.has(r.path));
    if (gone.length) {
      await this.hooks.beforeRemove?.(storageId);
      const removed: string[] = [];
      await this.write(() => {
        for (const r of gone) if (!this.writtenSince(storageId, r, startedAt)) counts.removed += this.removeTree(storageId, r.path, removed);
      });
      this.hooks.onFoldersChanged?.(storageId, [dir]);
      if (removed.length) this.hooks.onRemoved?.(storageId, removed);
    }
    counts.seen = listed.length;
    return counts;
  }

  /**
   * `dir` and the folders above it that the catalogue lacks, top first: the listing just proved they exist
   * (an object store's folder opened before the first sync has no row of its own until a walk yields it).
   */
  private uncataloguedFolders(storageId: number, dir: string): WalkEntry[] {
    const out: WalkEntry[] = [];
    for (let d = dir; d !== '' && !this.rows.row(storageId, d); d = parentRel(d)) out.unshift({ name: baseName(d), path: d, type: 'dir', size: 0, mtime: 0 });
    return out;
  }

  /** The backend's entries: its flat walk when it has one, else breadth-first listing (errors per folder recorded). */
  private async *entries(
    driver: StorageDriver,
    storageId: number,
    runId: number,
    counts: SyncCounts,
    failedDirs: string[],
    signal?: AbortSignal,
  ): AsyncGenerator<WalkEntry> {
    if (driver.walk) {
      for await (const e of driver.walk('', signal)) if (!e.path.split('/').some(isInternalName)) yield e;
      return;
    }
    const queue = [''];
    while (queue.length) {
      const dir = queue.shift()!;
      try {
        for await (const e of driver.list(dir)) {
          if (isInternalName(e.name)) continue;
          const path = joinRel(dir, e.name);
          if (e.type === 'dir') queue.push(path);
          yield { ...e, path };
        }
      } catch (err) {
        if (dir === '') throw err;
        failedDirs.push(dir);
        counts.errors++;
        this.recordError(runId, dir, err);
      }
      signal?.throwIfAborted();
    }
    void storageId;
  }

  /** One write transaction, retried off the event loop while another program holds the database. */
  private write(fn: () => void): Promise<void> {
    return this.rows.write(fn, BUSY_WAIT_MS);
  }

  /** Diffs one batch against the catalogue and writes the differences in one transaction. */
  private async apply(storageId: number, batch: WalkEntry[], seen: IdSet, counts: SyncCounts, listedAt: string, emptyBefore = false): Promise<void> {
    if (batch.length === 0) return;
    // Walks yield a folder's entries together: one index range scan per folder beats a point lookup per entry.
    const existing = new Map<string, Existing>();
    if (!emptyBefore) {
      const dirs = new Set(batch.map((e) => parentRel(e.path)));
      for (const dir of dirs) for (const r of this.rows.dirRows(storageId, dir)) existing.set(r.path, r);
    }
    const folders = new Set<string>();
    const files: SyncedFile[] = [];
    const now = new Date().toISOString();
    let minNew = Number.POSITIVE_INFINITY;
    await this.write(() => {
      // Decided inside the write: an entry the write gate removed (or moved away) after the listing saw it stays gone.
      const removed = this.nodes.removalsSince(storageId, listedAt);
      const fresh = batch.filter((e) => existing.has(e.path) || !removed(e.path));
      const inserted = this.db.dialect === 'postgres' ? this.rows.insertMany(storageId, fresh.filter((e) => !existing.has(e.path)).map(newRow), now) : null;
      for (const e of fresh) {
        const row = existing.get(e.path);
        if (!row) {
          const n = newRow(e);
          const { mime, mtime } = n;
          const id = inserted ? inserted.get(e.path) : this.rows.insertOne(storageId, n, now);
          if (id === undefined) {
            // The write gate catalogued it after this batch read the folder's rows: its row is the fresher one.
            seen.add(this.rows.row(storageId, e.path)!.id);
            continue;
          }
          if (id < minNew) minNew = id;
          seen.add(id);
          counts.added++;
          folders.add(parentRel(e.path));
          if (e.type === 'file') files.push({ id, kind: 'added', path: e.path, size: e.size, mtime, etag: e.etag ?? null, mime });
        } else {
          seen.add(row.id);
          if (changed(row, e)) {
            const n = newRow(e);
            const { mime, mtime } = n;
            this.rows.update(row.id, n, now);
            counts.updated++;
            folders.add(parentRel(e.path));
            if (e.type === 'file') files.push({ id: row.id, kind: 'drifted', path: e.path, size: e.size, mtime, etag: e.etag ?? null, mime });
          }
        }
      }
    });
    if (folders.size) this.hooks.onFoldersChanged?.(storageId, [...folders]);
    if (Number.isFinite(minNew)) this.hooks.onNodesAdded?.(minNew);
    if (files.length) this.hooks.onFilesChanged?.(storageId, files);
  }

  /**
   * Whether the write gate touched `row` (or, for a folder, anything below it)
   * after `since`, read afresh: the walk that began then could not have seen
   * it, so its absence from the walk says nothing (a copy writing while the
   * sync runs).
   */
  private writtenSince(storageId: number, row: { path: string; type: string }, since: string): boolean {
    const now = this.rows.row(storageId, row.path);
    if (!now || (now.updated_at ?? '') >= since) return true;
    return row.type === 'dir' && this.rows.freshBelow(storageId, row.path, since);
  }

  /** Deletes rows the run did not see, except below folders that failed to list and rows written since the run began. */
  private async deleteUnseen(storageId: number, seen: IdSet, failedDirs: string[], startedAt: string): Promise<number> {
    let removed = 0;
    let after = '';
    const folders = new Set<string>();
    for (;;) {
      const rows = this.rows.idsAfter(storageId, after);
      if (rows.length === 0) break;
      after = rows[rows.length - 1].path;
      const gone = rows.filter((r) => !seen.has(r.id) && !failedDirs.some((f) => r.path === f || r.path.startsWith(f + '/')));
      if (gone.length) {
        const paths: string[] = [];
        await this.write(() => {
          for (const r of gone) {
            // Checked inside the transaction: the gate may have written it since the batch was read.
            if (this.writtenSince(storageId, r, startedAt)) continue;
            removed += this.removeTree(storageId, r.path, paths);
            folders.add(r.dir);
          }
        });
        if (paths.length) this.hooks.onRemoved?.(storageId, paths);
        await yieldLoop();
      }
    }
    if (folders.size) this.hooks.onFoldersChanged?.(storageId, [...folders]);
    return removed;
  }

  /** Removes `path` and what is below it; notes `path` in `removed` when a row went (a child of a subtree removed before has none left). */
  private removeTree(storageId: number, path: string, removed: string[]): number {
    const n = this.nodes.removeTree(storageId, path).length;
    if (n) removed.push(path);
    return n;
  }

  private recordError(runId: number, path: string, e: unknown): void {
    const code = isAppError(e) ? e.code : 'internal';
    const reason = isAppError(e) ? String(e.params.reason ?? e.message) : e instanceof Error ? e.message : String(e);
    this.runs.recordError(runId, path, code, reason);
  }
}

/** A walk entry's new row: what it stores besides the entry's own fields. */
function newRow(e: WalkEntry): NewNode {
  const name = e.path.slice(e.path.lastIndexOf('/') + 1);
  return { e, name, mime: e.type === 'dir' ? null : (e.mime ?? mimeOf(name)), mtime: Math.round(e.mtime) };
}
