/**
 * The catalogue: storages and their access, the cached tree, sync, search
 * and the write gate. `createCatalogue` wires the parts; other modules use
 * this face only.
 */
import { untilFree, type Db } from '../db';
import type { EventBus } from '../events';
import type { JobQueue } from '../jobs';
import type { Logger } from '../lib/log';
import type { Principal } from '../auth';
import type { DriverManager, DriverRegistry, StorageDriver } from '../storage';
import { AppError } from '../errors';
import { parseUiPath } from '../lib/paths';
import { NodesRepo } from './nodes.repo';
import { StoragesRepo, type StorageRow } from './storages.repo';
import { StoragesService } from './storages.service';
import { SyncEngine, type SyncHooks } from './sync';
import { Syncer } from './syncer';
import { WriteGate } from './write-gate';
import { SearchIndexer } from './search-index';
import { effectiveLevel, atLeast, type Level } from './access';

export { NodesRepo, type NodeRow, type SortField, type ListOptions } from './nodes.repo';
export { StoragesRepo, type StorageRow, type Grant } from './storages.repo';
export { StoragesService, clampInterval, SYNC_MODES, type StorageInput, type StorageView, type SaveContext } from './storages.service';
export { Syncer, SYNC_JOB, type SyncRunView } from './syncer';
export { SyncEngine, TOMBSTONE_RATIO } from './sync';
export { SearchIndexer } from './search-index';
export { WriteGate, type WriteContext, type WriteOrigin, type WriteHook, type RemoveHook, type GateNode } from './write-gate';
export { effectiveLevel, atLeast, type Level } from './access';
export { sortKey } from './natural';
export { mimeOf, isImage, isVideo, isText } from './mime';

/** A UI path resolved against the caller's access. */
export interface Resolved {
  storage: StorageRow;
  rel: string;
  level: Level;
}

export interface CatalogueOptions {
  db: Db;
  bus: EventBus;
  queue: JobQueue;
  registry: DriverRegistry;
  manager: DriverManager;
  secretKey: Buffer;
  log: Logger;
  demo: boolean;
  syncHooks?: SyncHooks;
}

export function createCatalogue(o: CatalogueOptions) {
  const repo = new StoragesRepo(o.db);
  const nodes = new NodesRepo(o.db);
  const storages = new StoragesService(repo, o.registry, o.manager, o.secretKey, o.bus, { demo: o.demo, warn: (m) => o.log.warn(m) });
  const indexer = new SearchIndexer(o.db, (m, e) => o.log.error(m, e));
  indexer.kick(0); // names a crash left unindexed
  const hooks: SyncHooks = {
    onNodesAdded: (minId) => indexer.kick(minId),
    onFoldersChanged(storageId, folders) {
      // One transaction and one publish for the whole batch (a first sync touches thousands of folders).
      const record = o.db.sqlite.transaction(() => {
        for (const folder of folders) o.bus.record('folder.changed', { storage_id: storageId, folder, kind: 'updated', path: folder, name: '' });
      });
      // The batch is committed: its events must follow even if another program holds the database now.
      void untilFree(record, 600_000).then(() => o.bus.flush(), () => undefined);
    },
    onFileChanged: (id, kind) => o.syncHooks?.onFileChanged?.(id, kind),
  };
  const engine = new SyncEngine(o.db, hooks);
  const driverFor = (id: number): Promise<StorageDriver> => storages.driverFor(id);
  const syncer = new Syncer(o.db, repo, driverFor, engine, o.queue, o.log);
  storages.attachSyncer(syncer);
  const nameOf = (id: number) => repo.byId(id)?.name ?? String(id);
  const gate = new WriteGate(o.db, nodes, o.bus, nameOf, (m, e) => o.log.error(m, e));

  /** Storages the caller can open, with their effective level (one grants query for the set). */
  function visibleStorages(p: Principal): Array<{ storage: StorageRow; level: Level }> {
    const grants = repo.allGrants();
    const out: Array<{ storage: StorageRow; level: Level }> = [];
    for (const s of repo.all()) {
      const level = effectiveLevel(p, s, grants.get(s.id) ?? []);
      if (level) out.push({ storage: s, level });
    }
    return out;
  }

  /**
   * Resolves a UI path for the caller. A storage the caller cannot see is
   * `not_found` (as if it did not exist); `need` raises `forbidden` (visible
   * but not enough), or `read_only` for writes to a read-only storage.
   */
  function resolve(p: Principal, uiPath: unknown, need: Level = 'viewer', opts: { allowReserved?: boolean } = {}): Resolved {
    const { storage: key, rel } = parseUiPath(uiPath, opts);
    if (key === null) throw new AppError('bad_path', {}, { reason: 'a storage is required' });
    const s = repo.byNameOrUid(key);
    const level = s ? effectiveLevel(p, s, repo.grants(s.id)) : null;
    if (!s || !level) throw new AppError('not_found', { path: String(uiPath) });
    if (need !== 'viewer' && s.read_only) throw new AppError('read_only');
    if (!atLeast(level, need)) throw new AppError('forbidden');
    return { storage: s, rel, level };
  }

  return { repo, nodes, storages, engine, syncer, gate, indexer, driverFor, visibleStorages, resolve };
}

export type Catalogue = ReturnType<typeof createCatalogue>;
