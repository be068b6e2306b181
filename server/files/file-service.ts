/**
 * The file service: one per process, built by the composition root with the
 * storage operations and the protection ports, handing out an actor-scoped
 * face (`forActor`) to every door. It also owns the transfer op (copy and
 * move that cannot answer at once).
 */
import type { Actor, ActorRestorer } from '../auth';
import type { AppStates, Catalogue, FileLocks } from '../catalogue';
import type { Db } from '../db';
import type { NewdocType } from '../contract';
import type { ActorRef, EventBus, RequestMeta } from '../events';
import type { JobQueue } from '../jobs';
import { Access, type EncryptedMode, type Place } from './access';
import { ActorFiles } from './actor-files';
import { EncryptedRules } from './encrypted';
import { ListingRepo } from './listing.repo';
import { ListingService } from './listing.service';
import { SearchService } from './search.service';
import type { StorageOps } from './storage-ops';
import { Transfers } from './transfer';

/** Moves an item into the trash (protection). */
export interface TrashPort {
  /** `permanent` when the storage cannot move and the item was deleted for good instead. */
  moveToTrash(p: Place, by: ActorRef | null, o: { request?: RequestMeta }): Promise<{ permanent: boolean }>;
}

/** Keeps the bytes a write is about to replace (protection). */
export interface VersionsPort {
  /** No-op when there is nothing to keep (no file, a folder, an empty file, a service folder). */
  snapshotBeforeOverwrite(p: Place, by: ActorRef | null): Promise<unknown>;
}

/** The new-document types on offer now and their first bytes (docserver: office documents, diagrams). */
export interface NewdocPort {
  /** The types offered right now (office types only while the document server is configured). */
  types(): NewdocType[];
  /** The bytes of a new, empty document of type `ext` (one of `types()`). */
  template(ext: string): Promise<Buffer>;
}

/**
 * What feature modules plug into the file service: protection's trash and
 * versions (without them deletes are permanent and nothing is versioned), and
 * the new-document templates (without them only empty text files).
 */
export interface FilePorts {
  trash?: TrashPort;
  versions?: VersionsPort;
  newdoc?: NewdocPort;
}

export interface FilesDeps {
  db: Db;
  bus: EventBus;
  catalogue: Catalogue;
  ops: StorageOps;
  queue: JobQueue;
  /** Turns the actor a job recorded back into a live one (the person may have been disabled since). */
  actors: ActorRestorer;
  ports?: FilePorts;
  /** Signs `thumb_url`s in listing and search rows (the thumbnails module's stamp). */
  thumbUrl?: (id: number) => string;
}

export class FileService {
  readonly access: Access;
  readonly listing: ListingService;
  readonly search: SearchService;
  readonly transfers: Transfers;
  readonly ops: StorageOps;
  readonly catalogue: Catalogue;
  readonly ports: FilePorts;
  /** What is enforced inside encrypted folders (names, FDV1 headers, boundaries, server-side edits). */
  readonly encrypted: EncryptedRules;
  /**
   * App locks and app state on files (catalogue/file-locks, catalogue/app-state), place-addressed: the
   * app host API sets and clears them after its own access check; every door of this service respects them.
   */
  readonly locks: FileLocks;
  readonly appState: AppStates;

  constructor(d: FilesDeps) {
    this.locks = d.catalogue.locks;
    this.appState = d.catalogue.appState;
    this.ops = d.ops;
    this.catalogue = d.catalogue;
    this.ports = d.ports ?? {};
    this.access = new Access(d.catalogue);
    this.encrypted = new EncryptedRules(d.catalogue.roots);
    this.listing = new ListingService(d.catalogue, new ListingRepo(d.db, (id) => d.catalogue.locks.any(id)), d.thumbUrl);
    this.search = new SearchService(d.db, d.thumbUrl, () => d.catalogue.locks.anyAtAll(), d.catalogue.roots);
    this.transfers = new Transfers(this, d.queue, d.actors);
    // Every instance's page cache follows every instance's writes (several instances: docs/operations.md).
    d.bus.onEveryInstance(
      'folder.changed',
      (e) => this.listing.folderChanged(e.storage_id, e.folder, e.kind),
      () => this.listing.resync(),
    );
  }

  /**
   * Whether the catalogue holds a live item at `p` (no backend call), asked before a write lands: the
   * write gate's `created` (see WriteContext.created).
   */
  async catalogued(p: Place): Promise<boolean> {
    const n = await this.catalogue.nodes.get(this.catalogue.storageOf(p.storage_id), p.rel);
    return !!n && !n.deleted_at;
  }

  /**
   * The file service as `actor` may use it; `encrypted`: how this door meets encrypted folders (access.ts,
   * EncryptedMode: the web UI's `members` by default; the assistant, apps and server-side editors `refuse`).
   */
  forActor(actor: Actor, encrypted?: EncryptedMode): ActorFiles {
    return new ActorFiles(actor, this, [], encrypted);
  }
}
