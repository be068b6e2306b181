/**
 * The file service: one per process, built by the composition root with the
 * storage operations and the protection ports, handing out an actor-scoped
 * face (`forActor`) to every door. It also owns the transfer op (copy and
 * move that cannot answer at once).
 */
import type { Actor, ActorRestorer } from '../auth';
import type { AppStates, Catalogue, FileLocks, StorageRef } from '../catalogue';
import type { Db, TenantScope } from '../db';
import type { AppError } from '../errors';
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
import { quotaTurn, type QuotaTurn } from './quota-turn';

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

/** The tenant's storage quotas (multi-tenant mode: auth's TenantQuotas over the catalogue's TenantUsage). */
export interface QuotaPort {
  /**
   * Refuses (`quota_exceeded`, `details.scope: "tenant"`) a write adding `bytes` and `files` to the tenant's
   * over its quotas; else the bytes still free after it (Infinity: no bytes quota) and the refusal a longer body gets.
   */
  room(t: TenantScope, bytes: number, files: number): Promise<{ free: number; over: () => AppError }>;
  /** Counts `bytes` of a write in flight against the tenant until the returned function is called. */
  hold(t: TenantScope, bytes: number): () => void;
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
  quota?: QuotaPort;
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
   * A write's turn at its tenant's storage quotas (quota-turn.ts) for `declared` bytes (undefined: not known)
   * at `rel` of storage `s`, and whether the path is new there (WriteContext.created) as the catalogue says.
   */
  async quotaTurn(s: StorageRef, rel: string, declared: number | undefined): Promise<{ turn: QuotaTurn; created: boolean }> {
    const before = await this.catalogue.nodes.get(s, rel);
    const created = !before || !!before.deleted_at;
    return { turn: await quotaTurn(this.ports.quota, s, declared, !created && before.type === 'file' ? before.size : 0, created), created };
  }

  /**
   * Refuses (`quota_exceeded`) a copy of the item at `rel` of storage `from` into storage `to` when the files
   * the catalogue holds there would pass `to`'s tenant's quotas (a copy op checks before it is queued and
   * again when it runs; each file it writes takes its own turn).
   */
  async quotaRoom(from: StorageRef, rel: string, to: StorageRef): Promise<void> {
    if (!this.ports.quota) return;
    const files = (await this.catalogue.nodes.subtree(from, rel)).filter((n) => n.type === 'file');
    await this.checkQuota(
      to,
      files.reduce((n, f) => n + f.size, 0),
      files.length,
    );
  }

  /** Whether the tenants' quotas are checked (multi-tenant mode). */
  get hasQuotas(): boolean {
    return !!this.ports.quota;
  }

  /**
   * Refuses (`quota_exceeded`) adding `bytes` and `files` to storage `s`'s tenant over its quotas (nothing is
   * held: for writes announced ahead of their bytes, as a resumable upload's init). No-op without the quota port.
   */
  async checkQuota(s: StorageRef, bytes: number, files: number): Promise<void> {
    await this.ports.quota?.room(s, bytes, files);
  }

  /**
   * The file service as `actor` may use it; `encrypted`: how this door meets encrypted folders (access.ts,
   * EncryptedMode: the web UI's `members` by default; the assistant, apps and server-side editors `refuse`).
   */
  forActor(actor: Actor, encrypted?: EncryptedMode): ActorFiles {
    return new ActorFiles(actor, this, [], encrypted);
  }
}
