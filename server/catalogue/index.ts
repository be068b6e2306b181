/**
 * The catalogue: storages and their access levels, the cached tree, sync,
 * search indexing and the write gate. `createCatalogue` wires the parts and
 * returns two faces: `catalogue` for every module, and `io` (the live drivers
 * and the write gate) for the file service alone.
 */
import type { Db, TenantScope } from '../db';
import type { EventBus } from '../events';
import { DEFAULT_STORAGE_META } from './seed';
import type { JobQueue } from '../jobs';
import type { Logger } from '../lib/log';
import { volumeProbe, type DriverManager, type DriverRegistry, type VolumeProbe } from '../storage';
import { NodesRepo } from './nodes.repo';
import { StoragesRepo } from './storages.repo';
import { StoragesService } from './storages.service';
import { SyncEngine, type SyncedFile } from './sync';
import { Syncer } from './syncer';
import { WriteGate, type GateHooks } from './write-gate';
import { storageOf as storageRef, storageTenant } from './storage-ref';
import { TenantUsage } from './tenant-usage';
import { SearchIndexer } from './search-index';
import { DriverPool } from './driver-pool';
import { ThumbStates } from './thumb-states.repo';
import type { CatalogueIo } from './io';
import { RequestMeter } from './meter';
import { FileLocks } from './file-locks';
import { AppStates } from './app-state';
import { VolumeWatch } from './volumes';
import { FolderTurns } from './folder-turns';
import { EncryptedRoots } from './encrypted-roots';

export { NodesRepo, type NodeRow, type SortField, type ListOptions } from './nodes.repo';
export { StoragesRepo, type StorageRow, type Grant } from './storages.repo';
export {
  StoragesService,
  summary as storageSummary,
  clampInterval,
  SYNC_MODES,
  type StorageInput,
  type StorageView,
  type SaveContext,
} from './storages.service';
export { Syncer, SYNC_JOB, type SyncBudget } from './syncer';
export { RequestMeter, DEFAULT_PRICES, MAX_BUDGET, utcDay, type BudgetDay, type MeterView, type PriceTable, type RequestCounts } from './meter';
export { SyncEngine, TOMBSTONE_RATIO, type SyncedFile } from './sync';
export { VolumeWatch, type OfflineStorage, type RecordedVolume } from './volumes';
export { offlineHostStatus } from './host-status';
export { ThumbStates, type ThumbState, type ThumbNode, type CandidateQuery } from './thumb-states.repo';
export { TextExtractsRepo, type ExtractOutcome, type ExtractState, type PendingText, type StorageTextStatus, type TextWindow } from './text-extracts.repo';
export type { WriteContext, WriteOrigin, GatewayOrigin, WriteHook, RemoveHook, MoveHook, GateNode, GateHooks } from './write-gate';
export { effectiveLevel, grantedFolders, atLeast, type Level } from './access';
export { DEFAULT_STORAGE_META } from './seed';
export { FileLocks, lockTokenHash, type FileLock, type LockInput, type LockView } from './file-locks';
export { AppStates, MAX_APP_STATE, parseItems } from './app-state';
export { sortKey } from './natural';
export type { StorageRef } from './storage-ref';
export { storageTenant } from './storage-ref';
export { FirstStorage, suggestedFirstStorage } from './first-storage';
export { mimeOf, isImage, isVideo, isText } from './mime';
export { EncryptedRoots, type EncryptedRoot } from './encrypted-roots';
export { TenantUsage } from './tenant-usage';

/** Reacts to files a sync batch added or saw change (scans, thumbnails, replication); must only enqueue work. */
export type SyncFilesHook = (storageId: number, files: SyncedFile[]) => void | Promise<void>;
/** Reacts to entries a sync removed as gone from the backend (replication); must only enqueue work. */
export type SyncRemovedHook = (storageId: number, paths: string[]) => void;

/** What other modules declare at construction: post-write work by name, and reactions to synced changes. */
export interface CatalogueHooks extends GateHooks {
  synced?: Record<string, SyncFilesHook>;
  syncRemoved?: Record<string, SyncRemovedHook>;
}

export interface CatalogueOptions {
  db: Db;
  /** The storages repository, when the caller needed it earlier (driver decorators read the read-only flag). */
  repo?: StoragesRepo;
  bus: EventBus;
  queue: JobQueue;
  registry: DriverRegistry;
  manager: DriverManager;
  secretKey: Buffer;
  log: Logger;
  demo: boolean;
  hooks?: CatalogueHooks;
  /** The request meter (built before the driver manager, which counts into it); sync asks it about budgets. */
  meter?: RequestMeter;
  /** How local storages' volumes are identified (default: this OS's probe; null: not watched). */
  volumeProbe?: VolumeProbe | null;
  /** See StoragesService: checks a storage's link to a replication target before it is saved. */
  checkReplicaLink?: (targetId: number, storage: TenantScope & { driver: string; config: Record<string, unknown> }) => Promise<void>;
  /** Told a storage's OCR was turned on (StoragesService). */
  ocrTurnedOn?: (id: number) => Promise<unknown>;
}

export function createCatalogue(o: CatalogueOptions) {
  const repo = o.repo ?? new StoragesRepo(o.db);
  const nodes = new NodesRepo(o.db);
  // What each tenant's files take (its quotas), kept current by the write gate.
  const usage = new TenantUsage(nodes);
  // The volume watch needs the pool and the syncer, which ask it whether a storage's volume is gone.
  let volumes: VolumeWatch | undefined;
  const drivers = new DriverPool(o.manager, repo, (id) => volumes?.blocked(id) ?? null);
  const indexer = new SearchIndexer(
    o.db,
    () => repo.tenants(),
    (m, e) => o.log.error(m, e),
  );
  indexer.kick(0); // names a crash left unindexed
  /** Runs each named hook; one that throws is logged and the others still run. */
  const each = <A extends unknown[]>(hooks: Record<string, (...a: A) => void | Promise<void>> | undefined, ...a: A) => {
    for (const [name, hook] of Object.entries(hooks ?? {})) {
      try {
        // The sync goes on without waiting for a hook that answers later; its failure is logged all the same.
        hook(...a)?.catch((e) => o.log.error(`sync hook ${name} failed`, e));
      } catch (e) {
        o.log.error(`sync hook ${name} failed`, e);
      }
    }
  };
  // A node is reached through its storage, whatever the tenant, and carries the storage's (docs/tenants.md).
  // A storage gone meanwhile is no tenant's (0): its statements find and change nothing.
  const storageOf = (id: number) => storageRef(repo, id);
  // Started (awaited) by the composition root before the first request: the access check reads only its copy.
  const locks = new FileLocks(o.db, o.bus, repo, (m, e) => o.log.warn(m, e));
  const turns = new FolderTurns();
  const engine = new SyncEngine(
    o.db,
    {
      onNodesAdded: (minId) => indexer.kick(minId),
      beforeRemove: (id) => volumes?.verify(id) ?? Promise.resolve(),
      onFoldersChanged(storageId, folders) {
        // One unit of work and one publish for the whole batch (a first sync touches thousands of folders).
        // The batch is committed: its events must follow even if another program holds the database now.
        // In the storage's tenant; a storage deleted meanwhile has nobody left to tell.
        // The sync changed rows the gate never saw: the tenant's usage is counted again at its next check.
        usage.forget(storageOf(storageId));
        return Promise.resolve()
          .then(() =>
            o.bus.recordAll(
              storageTenant(repo, storageId),
              'folder.changed',
              folders.map((folder) => ({ storage_id: storageId, folder, kind: 'updated' as const, path: folder, name: '' })),
              { waitMs: 600_000 },
            ),
          )
          .then(() => o.bus.flush())
          .catch((e) => o.log.warn(`storage ${storageId}: a folder change could not be published`, e));
      },
      onFilesChanged: (storageId, files) => each(o.hooks?.synced, storageId, files),
      onRemoved: (storageId, paths) => {
        each(o.hooks?.syncRemoved, storageId, paths);
        void locks.treeChanged(storageId);
      },
    },
    turns,
  );
  const meter = o.meter ?? new RequestMeter(o.db, repo, () => ({}));
  // Background sync waits while a storage's volume is gone, as it does while its request budget is spent.
  const syncer = new Syncer(o.db, repo, (id) => drivers.driverFor(id), engine, o.queue, o.log, {
    blocked: async (id) => volumes?.blocked(id) ?? (await meter.blocked(id)),
  });
  volumes = new VolumeWatch(repo, drivers, syncer, o.bus, o.log, o.volumeProbe === undefined ? volumeProbe() : o.volumeProbe);
  // Encrypted folders are checked from memory on every request (like locks): started by the composition root.
  const roots = new EncryptedRoots(
    o.db,
    (m, e) => o.log.warn(m, e),
    () => repo.tenants(),
  );
  const storages = new StoragesService(repo, o.registry, drivers, syncer, o.secretKey, o.bus, {
    demo: o.demo,
    warn: (m) => o.log.warn(m),
    checkReplicaLink: o.checkReplicaLink,
    ocrTurnedOn: o.ocrTurnedOn,
    // The first storage an installation ever gets is its default storage (where home folders go: files/homes.ts).
    firstStorage: (id) => o.db.meta.setIfAbsent(DEFAULT_STORAGE_META, String(id)),
    // The storage's encrypted folders went with it (a cascade): the roots index must not keep them.
    deleted: () => roots.changed(),
  });
  // A lock follows its node: a move or removal in a storage holding one re-reads the locks before the write answers.
  const followLocks = (storageId: number) => locks.treeChanged(storageId);
  const gate = new WriteGate(
    o.db,
    nodes,
    o.bus,
    storageOf,
    (m, e) => o.log.error(m, e),
    {
      ...o.hooks,
      removed: { ...o.hooks?.removed, locks: followLocks },
      moved: { ...o.hooks?.moved, locks: followLocks },
    },
    usage,
  );
  const appState = new AppStates(o.db, nodes, o.bus, storageOf);
  // `storageOf`: a node's storage by a place's id (what its statements name), for callers that hold no storage row.
  const catalogue = { repo, nodes, usage, storageOf, storages, syncer, thumbStates: new ThumbStates(o.db), meter, volumes, locks, appState, roots };
  const io: CatalogueIo = { drivers, gate, turns };
  return {
    catalogue,
    io,
    stop: () => {
      indexer.stop();
      volumes.stop();
      locks.stop();
    },
  };
}

export type Catalogue = ReturnType<typeof createCatalogue>['catalogue'];
