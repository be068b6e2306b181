/**
 * The sync engine: streams a backend's entries, diffs them against the
 * catalogue in batches (one short transaction per batch, never across I/O),
 * records a sync run with counts and per-error detail, and applies the
 * tombstone guard (no delete pass when a run sees under 70 % of the last one).
 */
import type { Db, Tx, Unit, UnitOptions } from '../db';
import type { StorageDriver, WalkEntry } from '../storage';
import { AppError, isAppError } from '../errors';
import { isInternalName, isInternalPath, baseName, joinRel, parentRel } from '../lib/paths';
import { NodesRepo } from './nodes.repo';
import { SyncRunsRepo, type RunRef } from './sync-runs.repo';
import type { StorageRef } from './storage-ref';
import { SyncNodesRepo, type Existing, type NewNode } from './sync.repo';
import { mimeOf } from './mime';
import { FolderTurns } from './folder-turns';
import { foldersOf, NO_ROWS, WalkRows, type RowsByPath } from './walk-rows';

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
  /**
   * Folders whose content changed (relative paths), after each committed batch. Resolves once the change is
   * published on this instance (its listing caches follow): a folder check waits for it, a full sync does not.
   */
  onFoldersChanged?(storageId: number, folders: string[]): Promise<void> | void;
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
  /**
   * Publications of folder changes still under way, by `storage:folder`. A folder check answers after the
   * folder's, whoever wrote the change: a check that finds the rows already in step (an earlier check or a
   * full sync's batch wrote them, its `folder.changed` not yet out) would otherwise let Refresh answer
   * before the listing's cached pages are dropped (test/http/sync-open-folder, flaky on PostgreSQL).
   */
  private publishing = new Map<string, Promise<void>>();

  constructor(
    private db: Db,
    private hooks: SyncHooks = {},
    /** Shared with the file service's moves (catalogue/folder-turns.ts). */
    private turns = new FolderTurns(),
  ) {
    this.nodes = new NodesRepo(db);
    this.runs = new SyncRunsRepo(db);
    this.rows = new SyncNodesRepo(db);
  }

  /**
   * Full walk of a storage into run `runId`. A missing or unreachable root,
   * or a walk that breaks midway, records an errored run and removes nothing.
   * `bigFolder(dir, entries)` hears of every folder of at least BATCH entries the walk listed whole
   * (a walk yields a folder's entries together), so the syncer need not check it again right after.
   */
  async full(
    s: StorageRef,
    driver: StorageDriver,
    runId: number,
    signal?: AbortSignal,
    bigFolder?: (dir: string, entries: number) => void,
  ): Promise<SyncCounts> {
    const run: RunRef = { tenant_id: s.tenant_id, id: runId };
    const counts: SyncCounts = { added: 0, updated: 0, removed: 0, errors: 0, seen: 0 };
    const seen = new IdSet();
    const prevCount = await this.rows.count(s);
    const lastSeen = (await this.runs.lastSeen(s)) ?? prevCount;
    const failedDirs: string[] = [];
    const startedAt = new Date().toISOString();
    try {
      const root = await driver.stat('');
      if (root.type !== 'dir') throw new AppError('storage_unavailable', { reason: 'the storage root is not a folder' });
      // An empty catalogue has no rows to read (a first sync).
      const catalogued = prevCount === 0 ? null : new WalkRows((dirs) => this.rows.dirRows(s, dirs));
      const applyBatch = (batch: WalkEntry[]) =>
        this.inTurnsOf(s.id, batch, async () => {
          // A walk does not wait for its batches' changes to be published.
          await this.apply(s, batch, seen, counts, startedAt, catalogued ? await catalogued.of(batch) : NO_ROWS);
        });
      let batch: WalkEntry[] = [];
      // The folder the walk is in and its entries so far; a folder met again later is only counted short.
      let dir = '';
      let inDir = 0;
      const leave = () => inDir >= BATCH && !failedDirs.includes(dir) && bigFolder?.(dir, inDir);
      for await (const page of this.pages(driver, run, counts, failedDirs, signal))
        for (const e of page) {
          const parent = parentRel(e.path);
          if (parent !== dir) {
            leave();
            dir = parent;
            inDir = 0;
          }
          inDir++;
          batch.push(e);
          if (batch.length >= BATCH) {
            await applyBatch(batch);
            batch = [];
            await yieldLoop();
            signal?.throwIfAborted();
          }
        }
      await applyBatch(batch);
      leave();
    } catch (e) {
      await this.recordError(run, '', e);
      counts.errors++;
      throw e;
    }
    counts.seen = seen.size;
    // Tombstone guard: a run that saw far fewer entries than the last one is suspect.
    const base = Math.max(lastSeen, 0);
    if (base > 0 && seen.size < TOMBSTONE_RATIO * base) {
      await this.runs.tripGuard(run, `saw ${seen.size} of ${base} entries: delete pass skipped`);
      return counts;
    }
    // A first sync of an empty catalogue has nothing to tombstone.
    if (prevCount > 0) {
      await this.hooks.beforeRemove?.(s.id);
      counts.removed = await this.deleteUnseen(s, seen, failedDirs, startedAt);
    }
    return counts;
  }

  /** Revalidates one folder against the backend (opened folder, ondemand, watcher). Returns whether anything changed. */
  async folder(s: StorageRef, driver: StorageDriver, dir: string): Promise<SyncCounts> {
    // Rows written from here on are kept whatever the listing says: taken before waiting for the folder's turn.
    const startedAt = new Date().toISOString();
    const checked = await this.turns.run(s.id, [dir], () => this.folderNow(s, driver, dir, startedAt));
    // Waited for once the folder's turn is given back: publishing runs every pending event's listeners, and
    // none of them may wait behind a turn held for it.
    await Promise.all([...checked.told, this.publishing.get(`${s.id}:${dir}`)]);
    return checked.counts;
  }

  /** Tells the hook that `folders` changed, and notes the publication until it is done (`publishing`). */
  private foldersChanged(storageId: number, folders: string[]): Promise<void> | void {
    const told = this.hooks.onFoldersChanged?.(storageId, folders);
    if (!told) return told;
    const done = Promise.resolve(told).then(
      () => undefined,
      () => undefined,
    );
    for (const f of folders) {
      const key = `${storageId}:${f}`;
      const all = Promise.all([this.publishing.get(key), done]).then(() => undefined);
      this.publishing.set(key, all);
      void all.then(() => this.publishing.get(key) === all && this.publishing.delete(key));
    }
    return told;
  }

  private async folderNow(
    s: StorageRef,
    driver: StorageDriver,
    dir: string,
    startedAt: string,
  ): Promise<{ counts: SyncCounts; told: Array<Promise<void> | void> }> {
    const counts: SyncCounts = { added: 0, updated: 0, removed: 0, errors: 0, seen: 0 };
    const listed: WalkEntry[] = [];
    for await (const e of driver.list(dir)) if (!isInternalName(e.name)) listed.push({ ...e, path: joinRel(dir, e.name) });
    const rows = await this.rows.dirRows(s, [dir]);
    const names = new Set(listed.map((e) => e.path));
    const seen = new IdSet();
    const above = await this.db.async.read((t) => this.uncataloguedFoldersIn(t, s, dir));
    // The folder's rows, read once; batches of BATCH with the loop let go between them (a 100,000-entry
    // folder diffed in one piece held the event loop for a second under load: listings' p99, issue 38).
    const known = new Map(rows.map((r) => [r.path, r]));
    const all = [...above, ...listed];
    // The Refresh button answers once the folder's change is published here: the next listing must not come
    // from a page cached before it (on PostgreSQL publishing takes a few round trips).
    const told: Array<Promise<void> | void> = [];
    for (let i = 0; i < all.length; i += BATCH) {
      if (i) await yieldLoop();
      told.push((await this.apply(s, all.slice(i, i + BATCH), seen, counts, startedAt, known)).told);
    }
    const gone = rows.filter((r) => !names.has(r.path));
    if (gone.length) {
      await this.hooks.beforeRemove?.(s.id);
      const { removed, paths } = await this.write((t) => this.removeGoneIn(t, s, gone, startedAt), 'serializable');
      counts.removed += removed;
      told.push(this.foldersChanged(s.id, [dir]));
      if (paths.length) this.hooks.onRemoved?.(s.id, paths);
    }
    counts.seen = listed.length;
    return { counts, told };
  }

  /**
   * `dir` and the folders above it that the catalogue lacks, top first: the listing just proved they exist
   * (an object store's folder opened before the first sync has no row of its own until a walk yields it).
   */
  private *uncataloguedFoldersIn(t: Tx, s: StorageRef, dir: string): Unit<WalkEntry[]> {
    const out: WalkEntry[] = [];
    for (let d = dir; d !== '' && !(yield* this.rows.rowIn(t, s, d)); d = parentRel(d))
      out.unshift({ name: baseName(d), path: d, type: 'dir', size: 0, mtime: 0 });
    return out;
  }

  /**
   * The backend's entries, a page at a time: its flat walk when it has one (in the walk's own pages when it
   * gives them), else breadth-first listing in pages of one folder's entries (errors per folder recorded).
   */
  private async *pages(
    driver: StorageDriver,
    run: RunRef,
    counts: SyncCounts,
    failedDirs: string[],
    signal?: AbortSignal,
  ): AsyncGenerator<readonly WalkEntry[]> {
    if (driver.walk) {
      const walk = driver.walk('', signal);
      if (walk.pages) {
        for await (const page of walk.pages()) yield page.some((e) => isInternalPath(e.path)) ? page.filter((e) => !isInternalPath(e.path)) : page;
        return;
      }
      const page: WalkEntry[] = [];
      for await (const e of walk) {
        if (isInternalPath(e.path)) continue;
        page.push(e);
        if (page.length >= BATCH) yield page.splice(0);
      }
      yield page;
      return;
    }
    const queue = [''];
    while (queue.length) {
      const dir = queue.shift()!;
      const page: WalkEntry[] = [];
      try {
        for await (const e of driver.list(dir)) {
          if (isInternalName(e.name)) continue;
          const path = joinRel(dir, e.name);
          if (e.type === 'dir') queue.push(path);
          page.push({ ...e, path });
          if (page.length >= BATCH) yield page.splice(0);
        }
        yield page;
      } catch (err) {
        if (dir === '') throw err;
        failedDirs.push(dir);
        counts.errors++;
        await this.recordError(run, dir, err);
      }
      signal?.throwIfAborted();
    }
  }

  /** One unit of work, retried off the event loop while another program holds the database. */
  private write<T>(body: (t: Tx) => Unit<T>, isolation?: UnitOptions['isolation']): Promise<T> {
    return this.rows.write(body, BUSY_WAIT_MS, isolation);
  }

  /**
   * Runs `write` holding the turns of the folders of `batch`'s entries (a full walk's batch): a move through the
   * file service holds them from its rename on disk until the gate has recorded it, so a walk that listed the
   * new name first writes after the record and finds the moved row, instead of cataloguing a new node.
   */
  private inTurnsOf(storageId: number, batch: WalkEntry[], write: () => Promise<void>): Promise<void> {
    return this.turns.run(storageId, foldersOf(batch), write);
  }

  /**
   * Diffs one batch against the catalogue and writes the differences in one unit of work. `existing`: the rows
   * of the batch's folders (none at all on a first sync). Resolves with `told`, the publishing of its folders'
   * change (see `onFoldersChanged`), wrapped so that the caller chooses whether to wait for it.
   */
  private async apply(
    s: StorageRef,
    batch: WalkEntry[],
    seen: IdSet,
    counts: SyncCounts,
    listedAt: string,
    existing: RowsByPath,
  ): Promise<{ told?: Promise<void> | void }> {
    if (batch.length === 0) return {};
    // A batch that neither adds nor changes a row needs no unit of work (a re-sync of an unchanged tree takes
    // no write lock at all). A row removed since it was read still counts as seen: the delete pass asks
    // whether anything was removed during the run before it trusts the seen count.
    const rows = batch.map((e) => existing.get(e.path));
    if (rows.every((r, i) => r && !changed(r, batch[i]))) {
      for (const r of rows) seen.add(r!.id);
      return {};
    }
    // The unit's results are applied once it commits (PostgreSQL may run its body again after a conflict).
    const out = await this.write((t) => this.diffIn(t, s, batch, existing, listedAt));
    for (const id of out.seen) seen.add(id);
    counts.added += out.added;
    counts.updated += out.updated;
    const told = out.folders.size ? this.foldersChanged(s.id, [...out.folders]) : undefined;
    if (Number.isFinite(out.minNew)) this.hooks.onNodesAdded?.(out.minNew);
    if (out.files.length) this.hooks.onFilesChanged?.(s.id, out.files);
    return { told };
  }

  /** The body of `apply`'s unit: inserts new entries, updates changed ones; what it did. */
  private *diffIn(t: Tx, s: StorageRef, batch: WalkEntry[], existing: RowsByPath, listedAt: string) {
    const out = { seen: [] as number[], added: 0, updated: 0, folders: new Set<string>(), files: [] as SyncedFile[], minNew: Number.POSITIVE_INFINITY };
    const now = new Date().toISOString();
    // Decided inside the unit: an entry the write gate removed (or moved away) after the listing saw it stays gone.
    const removed = yield* this.nodes.removalsSinceIn(t, s, listedAt);
    const fresh = batch.filter((e) => existing.has(e.path) || !removed(e.path));
    const news = new Map(fresh.filter((e) => !existing.has(e.path)).map((e) => [e.path, newRow(e)]));
    const inserted = yield* this.rows.insertManyIn(t, s, [...news.values()], now);
    for (const e of fresh) {
      const row = existing.get(e.path);
      if (!row) {
        const { mime, mtime } = news.get(e.path)!;
        const id = inserted.get(e.path);
        if (id === undefined) {
          // The write gate catalogued it after this batch read the folder's rows: its row is the fresher one.
          out.seen.push((yield* this.rows.rowIn(t, s, e.path))!.id);
          continue;
        }
        if (id < out.minNew) out.minNew = id;
        out.seen.push(id);
        out.added++;
        out.folders.add(parentRel(e.path));
        if (e.type === 'file') out.files.push({ id, kind: 'added', path: e.path, size: e.size, mtime, etag: e.etag ?? null, mime });
      } else {
        out.seen.push(row.id);
        if (changed(row, e)) {
          const n = newRow(e);
          const { mime, mtime } = n;
          yield* this.rows.updateIn(t, s, row.id, n, now);
          out.updated++;
          out.folders.add(parentRel(e.path));
          if (e.type === 'file') out.files.push({ id: row.id, kind: 'drifted', path: e.path, size: e.size, mtime, etag: e.etag ?? null, mime });
        }
      }
    }
    return out;
  }

  /**
   * Whether the write gate touched `row` (or, for a folder, anything below it)
   * after `since`, read afresh: the walk that began then could not have seen
   * it, so its absence from the walk says nothing (a copy writing while the
   * sync runs).
   */
  private *writtenSinceIn(t: Tx, s: StorageRef, row: { path: string; type: string }, since: string): Unit<boolean> {
    const now = yield* this.rows.rowIn(t, s, row.path);
    if (!now || (now.updated_at ?? '') >= since) return true;
    return row.type === 'dir' && (yield* this.rows.freshBelowIn(t, s, row.path, since));
  }

  /** Deletes rows the run did not see, except below folders that failed to list and rows written since the run began. */
  private async deleteUnseen(s: StorageRef, seen: IdSet, failedDirs: string[], startedAt: string): Promise<number> {
    // Every id the run saw is still a row unless something was removed since it began (removals are noted):
    // then as many rows as seen ids means no row went unseen, and the pass need not read the storage's rows.
    if (!(await this.nodes.removedSince(s, startedAt)) && (await this.rows.count(s)) === seen.size) return 0;
    let removed = 0;
    let after = '';
    const folders = new Set<string>();
    for (;;) {
      const rows = await this.rows.idsAfter(s, after);
      if (rows.length === 0) break;
      after = rows[rows.length - 1].path;
      const gone = rows.filter((r) => !seen.has(r.id) && !failedDirs.some((f) => r.path === f || r.path.startsWith(f + '/')));
      if (gone.length) {
        const out = await this.write((t) => this.removeGoneIn(t, s, gone, startedAt), 'serializable');
        removed += out.removed;
        for (const r of out.done) folders.add(r.dir);
        if (out.paths.length) this.hooks.onRemoved?.(s.id, out.paths);
        await yieldLoop();
      }
    }
    if (folders.size) this.foldersChanged(s.id, [...folders]);
    return removed;
  }

  /**
   * Removes each of `gone` and what is below it, unless written since `since` (checked inside the unit: the
   * gate may have written it since the rows were read; on PostgreSQL the unit is serializable, so a gate
   * write landing between the check and the delete makes it run again and see it). Folders one by one (a
   * subtree each), then the files left in a few set-based statements. `removed`: rows gone; `paths`: the
   * tops that lost rows (a child of a subtree removed before has none left); `done`: the entries not spared.
   */
  private *removeGoneIn<R extends { id: number; path: string; type: string }>(t: Tx, s: StorageRef, gone: R[], since: string) {
    const out = { removed: 0, paths: [] as string[], done: [] as R[] };
    const files = new Map<number, R>();
    for (const r of gone) {
      if (r.type !== 'dir') {
        files.set(r.id, r);
        continue;
      }
      if (yield* this.writtenSinceIn(t, s, r, since)) continue;
      const n = (yield* this.nodes.removeTreeIn(t, s, r.path)).length;
      if (n) out.paths.push(r.path);
      out.removed += n;
      out.done.push(r);
    }
    for (const { id, path } of yield* this.nodes.removeFilesIn(t, s, [...files.keys()], since)) {
      out.paths.push(path);
      out.removed++;
      out.done.push(files.get(id)!);
    }
    return out;
  }

  private recordError(run: RunRef, path: string, e: unknown): Promise<void> {
    const code = isAppError(e) ? e.code : 'internal';
    const reason = isAppError(e) ? String(e.params.reason ?? e.message) : e instanceof Error ? e.message : String(e);
    return this.runs.recordError(run, path, code, reason);
  }
}

/** A walk entry's new row: what it stores besides the entry's own fields. */
function newRow(e: WalkEntry): NewNode {
  const name = e.path.slice(e.path.lastIndexOf('/') + 1);
  return { e, name, mime: e.type === 'dir' ? null : (e.mime ?? mimeOf(name)), mtime: Math.round(e.mtime) };
}
