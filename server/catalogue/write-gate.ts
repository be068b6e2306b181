/**
 * The post-write gate. Every write surface (upload, save-text, newfile,
 * copy/move worker, archive extract, restores, public drop, editor save,
 * gateways) ends here: refresh the node row, record the outbox events
 * (`file.uploaded` / `file.updated`, the folder's realtime change, the audit
 * row) in one short transaction, publish them after commit, then run the
 * post-write hooks (thumbnail, antivirus scan, later replication) that other
 * modules registered by name. Nothing else announces a write.
 */
import { commitInDoubt, isBusy, type Db, type InDoubt } from '../db';
import type { EventBus, ActorRef, RequestMeta } from '../events';
import type { Entry } from '../storage';
import { baseName, parentRel } from '../lib/paths';
import type { NodesRepo, NodeRow } from './nodes.repo';
import { GateRepo, type GateEvent } from './gate.repo';
import type { NamedStorageRef } from './storage-ref';
import type { TenantUsage } from './tenant-usage';

/** Where a write came from; decides the event name and the thumbnail timeout. */
export type WriteOrigin =
  | 'upload'
  | 'drop'
  | 'save-text'
  | 'newfile'
  | 'copy'
  | 'move'
  | 'extract'
  | 'restore'
  | 'docserver'
  | 'mkdir'
  | 'app'
  | 'backup'
  | GatewayOrigin;
/** The protocol gateways: a write through one carries it as `meta.origin`. */
export type GatewayOrigin = 'webdav' | 'sftp' | 'ftp' | 's3' | 'nfs';
// An app's output file is a new file written for a person, like an upload (meta.plugin names the app).
const UPLOAD_SURFACES = new Set<WriteOrigin>(['upload', 'drop', 'save-text', 'newfile', 'app', 'webdav', 'sftp', 'ftp', 's3', 'nfs']);

/** The first pause before settling a write taken back in doubt, and the longest: settled soon after the database is back. */
const SETTLE_FIRST_PAUSE_MS = 500;
const SETTLE_MAX_PAUSE_MS = 2000;

export interface WriteContext {
  actor?: ActorRef | null;
  /** Extracted text of a small text file, for full-text search. */
  body?: string;
  request?: RequestMeta;
  origin: WriteOrigin;
  /** Audit action to record (e.g. `file.upload`, `file.copy`); none when omitted. */
  audit?: string;
  meta?: Record<string, unknown>;
  /**
   * Whether the write made a new item, as the writer saw it before its bytes landed. A watched storage's
   * sync may catalogue the new file between the write and this announcement, so the catalogue alone
   * would call a fresh upload an update. Absent: decided from the catalogue here.
   */
  created?: boolean;
  /**
   * Takes the bytes back when the announcement cannot be recorded because the database is away: the writer
   * answers an error, so a new file must not stay behind for a later sync to show (a refused upload leaves nothing).
   */
  undo?: () => Promise<void>;
}

export interface GateNode extends NodeRow {
  storageName: string;
}

/** A post-write hook: runs after commit and is awaited; it should enqueue work, not do it (a failure is logged). */
export type WriteHook = (
  node: GateNode,
  info: { created: boolean; origin: WriteOrigin; actor: ActorRef | null; meta?: Record<string, unknown> },
) => void | Promise<void>;
/** Runs after nodes left the catalogue for good (purge, permanent delete): drop what hangs off their ids. */
export type RemoveHook = (storageId: number, nodeIds: number[]) => void | Promise<void>;

/** Runs after a move inside one storage committed (node ids kept, paths changed) and is awaited. */
export type MoveHook = (storageId: number, from: string, to: string) => void | Promise<void>;

/** The post-write work other modules declare at construction, by name (for logs). */
export interface GateHooks {
  written?: Record<string, WriteHook>;
  removed?: Record<string, RemoveHook>;
  moved?: Record<string, MoveHook>;
}

export class WriteGate {
  private hooks: Array<[string, WriteHook]>;
  private removeHooks: Array<[string, RemoveHook]>;
  private moveHooks: Array<[string, MoveHook]>;
  private repo: GateRepo;

  constructor(
    db: Db,
    nodes: NodesRepo,
    private bus: EventBus,
    /** The storage of an id, whatever its tenant (`StoragesRepo.ofAnyTenant`: a map lookup, no query). */
    private storageOf: (id: number) => NamedStorageRef,
    private log: (msg: string, err?: unknown) => void,
    hooks: GateHooks = {},
    /** The tenants' usage figures the gate keeps current (their quotas); none in tests that need none. */
    private usage?: TenantUsage,
  ) {
    this.repo = new GateRepo(db, nodes, bus);
    this.hooks = Object.entries(hooks.written ?? {});
    this.removeHooks = Object.entries(hooks.removed ?? {});
    this.moveHooks = Object.entries(hooks.moved ?? {});
  }

  /**
   * A file or folder was written at `path` and `entry` is its fresh stat. Returns its node row. Two writes
   * of one new path at once: one is announced as the upload, the other as its update (GateRepo.written).
   */
  async written(storageId: number, path: string, entry: Entry, ctx: WriteContext): Promise<GateNode> {
    const st = this.storageOf(storageId);
    const storage = st.name;
    const events = (id: number, created: boolean): GateEvent[] => {
      const ref = { storage_id: storageId, storage, path, name: baseName(path), size: entry.size, type: entry.type, id };
      const meta = { origin: ctx.origin, ...ctx.meta };
      const out: GateEvent[] = [];
      if (entry.type === 'file') {
        if (!created) out.push(['file.updated', { node: ref, actor: ctx.actor ?? null, meta }]);
        else if (UPLOAD_SURFACES.has(ctx.origin)) out.push(['file.uploaded', { node: ref, actor: ctx.actor ?? null, meta }]);
      }
      out.push(['folder.changed', { storage_id: storageId, folder: parentRel(path), kind: created ? 'created' : 'updated', path, name: baseName(path) }]);
      if (ctx.audit)
        out.push([
          'audit',
          { action: ctx.audit, actor: ctx.actor, request: ctx.request, resource: `${storage}://${path}`, meta: { size: entry.size, ...ctx.meta } },
        ]);
      return out;
    };
    let done: { row: NodeRow; created: boolean; delta: { bytes: number; files: number } };
    try {
      // The bytes are written already: the unit waits (off the event loop) for a database held elsewhere rather than fail at once.
      done = await this.repo.written(st, path, entry, { ownerId: ctx.actor?.id ?? null, body: ctx.body, created: ctx.created, events });
    } catch (e) {
      // The database is away: the writer answers an error, so its bytes go too (WriteContext.undo).
      if (ctx.undo && isBusy(e)) {
        const undone = await ctx.undo().then(
          () => true,
          (u) => (this.log(`taking back ${storage}://${path} after the database went away failed`, u), false),
        );
        const doubt = commitInDoubt(e);
        if (undone && doubt) this.settleTakenBack(storageId, path, entry, doubt);
      }
      throw e;
    }
    this.usage?.changed(st, done.delta);
    await this.bus.flush();
    const node = { ...done.row, storageName: storage };
    for (const [name, hook] of this.hooks) {
      try {
        await hook(node, { created: done.created, origin: ctx.origin, actor: ctx.actor ?? null, meta: ctx.meta });
      } catch (e) {
        this.log(`write hook ${name} failed for ${storage}://${path}`, e);
      }
    }
    return node;
  }

  /**
   * A write taken back after its COMMIT went unanswered may still commit when the database wakes: its row
   * would list a file that is gone. Once the unit's fate is decided, that row (if any) goes; until the
   * database answers, tried again with growing pauses.
   */
  private settleTakenBack(storageId: number, path: string, entry: Entry, doubt: InDoubt): void {
    const st = this.storageOf(storageId);
    const storage = st.name;
    const events: GateEvent[] = [['folder.changed', { storage_id: storageId, folder: parentRel(path), kind: 'deleted', path, name: baseName(path) }]];
    const attempt = (pauseMs: number) =>
      setTimeout(() => {
        const again = () => attempt(Math.min(pauseMs * 2, SETTLE_MAX_PAUSE_MS));
        doubt
          .decided()
          .then(async (decided) => {
            if (!decided) return again();
            if (await this.repo.takenBack(st, path, entry, events)) {
              this.usage?.forget(st);
              await this.bus.flush();
            }
          })
          .catch((e) => (isBusy(e) ? again() : this.log(`settling ${storage}://${path} after a commit in doubt failed`, e)));
      }, pauseMs).unref();
    attempt(SETTLE_FIRST_PAUSE_MS);
  }

  /** A file or folder at `path` is gone from the backend for good (permanent delete, purge). */
  async removed(storageId: number, path: string, ctx: Omit<WriteContext, 'origin'> & { origin?: WriteOrigin }): Promise<void> {
    const st = this.storageOf(storageId);
    const storage = st.name;
    const events: GateEvent[] = [['folder.changed', { storage_id: storageId, folder: parentRel(path), kind: 'deleted', path, name: baseName(path) }]];
    if (ctx.audit)
      events.push(['audit', { action: ctx.audit, actor: ctx.actor, request: ctx.request, resource: `${storage}://${path}`, meta: ctx.meta ?? {} }]);
    const { ids, freed } = await this.repo.removed(st, path, events);
    this.usage?.changed(st, { bytes: -freed.bytes, files: -freed.files });
    await this.bus.flush();
    for (const [name, hook] of this.removeHooks) {
      try {
        await hook(storageId, ids);
      } catch (e) {
        this.log(`remove hook ${name} failed for ${storage}://${path}`, e);
      }
    }
  }

  /**
   * A move or rename inside one storage: node ids (and with them thumbnails,
   * shares and versions) follow the item. Cross-storage moves are a copy
   * through `written` plus `removed`.
   */
  async moved(storageId: number, from: string, to: string, entry: Entry, ctx: WriteContext): Promise<GateNode> {
    const st = this.storageOf(storageId);
    const storage = st.name;
    const events: GateEvent[] = [
      ['folder.changed', { storage_id: storageId, folder: parentRel(from), kind: 'deleted', path: from, name: baseName(from) }],
      ['folder.changed', { storage_id: storageId, folder: parentRel(to), kind: 'created', path: to, name: baseName(to) }],
    ];
    if (ctx.audit)
      events.push([
        'audit',
        { action: ctx.audit, actor: ctx.actor, request: ctx.request, resource: `${storage}://${to}`, meta: { from: `${storage}://${from}`, ...ctx.meta } },
      ]);
    const row = await this.repo.moved(st, from, to, entry, ctx.actor?.id ?? null, events);
    await this.bus.flush();
    for (const [name, hook] of this.moveHooks) {
      try {
        await hook(storageId, from, to);
      } catch (e) {
        this.log(`move hook ${name} failed for ${storage}://${from}`, e);
      }
    }
    return { ...row!, storageName: storage };
  }
}
