/**
 * The post-write gate. Every write surface (upload, save-text, newfile,
 * copy/move worker, archive extract, restores, public drop, editor save,
 * gateways) ends here: refresh the node row, record the outbox events
 * (`file.uploaded` / `file.updated`, the folder's realtime change, the audit
 * row) in one short transaction, publish them after commit, then run the
 * post-write hooks (thumbnail, antivirus scan, later replication) that other
 * modules registered by name. Nothing else announces a write.
 */
import { isBusy, type Db } from '../db';
import type { EventBus, ActorRef, RequestMeta } from '../events';
import type { Entry } from '../storage';
import { baseName, parentRel } from '../lib/paths';
import { NodesRepo, type NodeRow } from './nodes.repo';
import { mimeOf } from './mime';

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

/** The post-write work other modules declare at construction, by name (for logs). */
export interface GateHooks {
  written?: Record<string, WriteHook>;
  removed?: Record<string, RemoveHook>;
}

export class WriteGate {
  private hooks: Array<[string, WriteHook]>;
  private removeHooks: Array<[string, RemoveHook]>;

  constructor(
    private db: Db,
    private nodes: NodesRepo,
    private bus: EventBus,
    private storageName: (id: number) => string,
    private log: (msg: string, err?: unknown) => void,
    hooks: GateHooks = {},
  ) {
    this.hooks = Object.entries(hooks.written ?? {});
    this.removeHooks = Object.entries(hooks.removed ?? {});
  }

  /** A file or folder was written at `path` and `entry` is its fresh stat. Returns its node row. */
  async written(storageId: number, path: string, entry: Entry, ctx: WriteContext): Promise<GateNode> {
    const storage = this.storageName(storageId);
    let created = false;
    let id = 0;
    // The bytes are written already: wait (off the event loop) for a database held elsewhere rather than fail at once.
    await this.record(
      ctx,
      () => {
        const before = this.nodes.get(storageId, path);
        created = ctx.created ?? (!before || !!before.deleted_at);
        this.nodes.ensureParents(storageId, path);
        id = this.nodes.upsert(storageId, path, { ...entry, name: baseName(path) }, ctx.actor?.id ?? null);
        if (ctx.body !== undefined && entry.type === 'file' && NodesRepo.textual(entry.mime ?? mimeOf(path), entry.size)) this.nodes.setBody(id, ctx.body);
        const ref = { storage_id: storageId, storage, path, name: baseName(path), size: entry.size, type: entry.type, id };
        if (entry.type === 'file') {
          if (!created) this.bus.record('file.updated', { node: ref, actor: ctx.actor ?? null, meta: { origin: ctx.origin, ...ctx.meta } });
          else if (UPLOAD_SURFACES.has(ctx.origin))
            this.bus.record('file.uploaded', { node: ref, actor: ctx.actor ?? null, meta: { origin: ctx.origin, ...ctx.meta } });
        }
        this.bus.record('folder.changed', {
          storage_id: storageId,
          folder: parentRel(path),
          kind: created ? 'created' : 'updated',
          path,
          name: baseName(path),
        });
        if (ctx.audit)
          this.bus.record('audit', {
            action: ctx.audit,
            actor: ctx.actor,
            request: ctx.request,
            resource: `${storage}://${path}`,
            meta: { size: entry.size, ...ctx.meta },
          });
      },
      `${storage}://${path}`,
    );
    await this.bus.flush();
    const node = { ...this.nodes.byId(id)!, storageName: storage };
    for (const [name, hook] of this.hooks) {
      try {
        await hook(node, { created, origin: ctx.origin, actor: ctx.actor ?? null, meta: ctx.meta });
      } catch (e) {
        this.log(`write hook ${name} failed for ${storage}://${path}`, e);
      }
    }
    return node;
  }

  /** Runs the announcement's transaction; when the database is away, the writer's `undo` first (see WriteContext). */
  private async record(ctx: WriteContext, tx: () => void, what: string): Promise<void> {
    try {
      await this.db.waits.write(tx);
    } catch (e) {
      if (ctx.undo && isBusy(e)) await ctx.undo().catch((u) => this.log(`taking back ${what} after the database went away failed`, u));
      throw e;
    }
  }

  /** A file or folder at `path` is gone from the backend for good (permanent delete, purge). */
  async removed(storageId: number, path: string, ctx: Omit<WriteContext, 'origin'> & { origin?: WriteOrigin }): Promise<void> {
    const storage = this.storageName(storageId);
    let ids: number[] = [];
    await this.db.waits.write(() => {
      ids = this.nodes.removeTree(storageId, path);
      this.bus.record('folder.changed', { storage_id: storageId, folder: parentRel(path), kind: 'deleted', path, name: baseName(path) });
      if (ctx.audit)
        this.bus.record('audit', { action: ctx.audit, actor: ctx.actor, request: ctx.request, resource: `${storage}://${path}`, meta: ctx.meta ?? {} });
    });
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
    const storage = this.storageName(storageId);
    await this.db.waits.write(() => {
      this.nodes.ensureParents(storageId, to);
      this.nodes.moveTree(storageId, from, to);
      // An item the catalogue had not seen yet still gets its row.
      if (!this.nodes.get(storageId, to)) this.nodes.upsert(storageId, to, { ...entry, name: baseName(to) }, ctx.actor?.id ?? null);
      this.bus.record('folder.changed', { storage_id: storageId, folder: parentRel(from), kind: 'deleted', path: from, name: baseName(from) });
      this.bus.record('folder.changed', { storage_id: storageId, folder: parentRel(to), kind: 'created', path: to, name: baseName(to) });
      if (ctx.audit)
        this.bus.record('audit', {
          action: ctx.audit,
          actor: ctx.actor,
          request: ctx.request,
          resource: `${storage}://${to}`,
          meta: { from: `${storage}://${from}`, ...ctx.meta },
        });
    });
    await this.bus.flush();
    return { ...this.nodes.get(storageId, to)!, storageName: storage };
  }
}
