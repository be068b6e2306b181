/**
 * The file service as one actor sees it: the only way a door (HTTP routes,
 * public links, drops, archives, op workers, the CLI, later the gateways,
 * app plugins and the assistant) reaches files. Every call resolves its path
 * and checks the actor's access here, reaches the storage through the
 * storage operations, and ends every write in the write gate; deletes go to
 * the trash and overwrites keep a version when protection is wired in.
 * Paths are UI paths (`/<storage name or uid>/<rel>`) or places (storage id
 * and relative path, as jobs keep them).
 */
import { Readable } from 'node:stream';
import { actorRef, type Actor } from '../auth';
import { lockTokenHash, mimeOf, type GateNode, type Level, type NodeRow, type WriteContext, type WriteOrigin } from '../catalogue';
import type { DeleteResult, FileEntry, NewdocType } from '../contract';
import { AppError, isAppError } from '../errors';
import { baseName, checkName, extOf, isWithin, joinRel, parentRel, uiPath } from '../lib/paths';
import type { Entry, PresignOptions } from '../storage';
import type { EncryptedMode, Place, Target, TargetOptions } from './access';
import { etagOf, presentNode, servedEtag } from './entry';
import type { FileService } from './file-service';
import type { ListInput, ListingBody, ListedEntry } from './listing.service';
import type { PageEncoding } from './compressed-pages';
import type { SearchInput, SearchResult } from './search.service';
import { StagedWrite } from './staged-write';

/** Copies of a single file up to this size within one storage answer at once; the rest run as an op. */
export const SYNC_COPY_MAX = 64 * 1024 * 1024;
/** Paths one delete request may name (spec: `too_many_paths`, max 500). */
export const MAX_DELETE_PATHS = 500;
/** Largest text a save-text call writes. */
export const MAX_TEXT_BYTES = 5 * 1024 * 1024;

/** New-document types that need no external service (office types come with the document server). */
export const NEWDOC_TYPES: readonly NewdocType[] = [
  { ext: 'txt', group: 'text', mime: 'text/plain', requires: '' },
  { ext: 'md', group: 'text', mime: 'text/markdown', requires: '' },
];

export type Path = string | Place;
/** `exact`: `to` is the target itself, never a folder to move into (WebDAV, SFTP). */
export interface PlanOptions {
  exact?: boolean;
}
export type TransferResult = { ok: true } | { operation_id: string };

/** A file opened for serving: its validators, and its bytes by span. */
export interface OpenFile {
  place: Place;
  name: string;
  size: number;
  mtime: number;
  /** Quoted strong validator. */
  etag: string;
  mime: string;
  /** The bytes of `span` (inclusive), or the whole file. */
  read(span?: { start: number; end: number }, signal?: AbortSignal): Promise<Readable>;
  /** The local fast path: the contained real path on a local disk, or null. */
  localFile(): Promise<string | null>;
  /**
   * That local file already opened for reading, handed over once (the taker
   * closes it), or its bytes when small ones are kept in memory; null when there
   * is none or it was taken. Take it in the same turn of the event loop as `open`
   * (a serve does): later a descriptor is closed.
   */
  takeLocal?(): number | Buffer | null;
  /** A presigned URL straight to the backend, or null when it has none. */
  presign(o: PresignOptions): Promise<string | null>;
}

export interface WriteOptions {
  /** Declared size when known. */
  size?: number;
  mime?: string;
  /** When false and the target exists → `conflict`. Default true. */
  overwrite?: boolean;
  signal?: AbortSignal;
  origin: WriteOrigin;
  audit?: string;
  meta?: Record<string, unknown>;
  /** Text kept for full-text search (small text files); a function is read once the bytes are written. */
  body?: string | (() => string | undefined);
  /** Keep the replaced bytes as a version first (default true; bulk jobs turn it off). */
  version?: boolean;
  /** The body is this staged file's bytes, given up to the storage (see the storage WriteOptions). */
  fromFile?: string;
}

export class ActorFiles {
  /** `held`: token hashes of the app locks this face holds (see `holding`); `encrypted`: how it meets encrypted folders. */
  constructor(
    readonly actor: Actor,
    private svc: FileService,
    private held: readonly string[] = [],
    readonly encrypted: EncryptedMode = 'members',
  ) {}

  /** Resolves a path and checks `need` (access.ts: `not_found`, `forbidden`, `read_only`, `locked`, `encrypted`). */
  target(path: Path, need: Level = 'viewer', opts?: TargetOptions): Target {
    // Every request resolves a path: no options object is made unless this face holds a lock or meets encrypted folders otherwise.
    if (!this.held.length && this.encrypted === 'members') return this.svc.access.target(this.actor, path, need, opts);
    return this.svc.access.target(this.actor, path, need, { encrypted: this.encrypted, ...opts, heldLocks: this.held });
  }

  /** This face, meeting encrypted folders as `mode` says (access.ts, EncryptedMode): the assistant, apps, gateways. */
  withEncrypted(mode: EncryptedMode): ActorFiles {
    return new ActorFiles(this.actor, this.svc, this.held, mode);
  }

  /**
   * This face, holding the app lock `token` (what FileLocks.set returned):
   * the locked file stays writable, renamable and deletable through it, for
   * the lock's app (its job) alone; everyone else gets `locked`.
   */
  holding(token: string): ActorFiles {
    return new ActorFiles(this.actor, this.svc, [...this.held, lockTokenHash(token)], this.encrypted);
  }

  /** Refuses (`locked`) when a file at or below `path` is locked by an app this face does not hold. */
  checkUnlocked(path: Path): void {
    const t = this.target(path);
    this.svc.catalogue.locks.checkTree(t.storage.id, t.rel, this.held);
  }

  /** Storages this actor can open, with their levels. */
  visible() {
    return this.svc.access.visible(this.actor, this.encrypted);
  }

  /** The entry at `path` as the backend reports it. Missing → `not_found`. */
  async stat(path: Path): Promise<Entry> {
    return this.svc.ops.stat(this.target(path).place);
  }

  /** Whether `path` exists on the storage (other errors propagate). */
  async exists(path: Path): Promise<boolean> {
    return (await this.svc.ops.statOrNull(this.target(path).place)) !== null;
  }

  /**
   * A file for serving (raw route, share links, gateways). A folder → `not_found`.
   * `send`: the caller is about to send the bytes (a GET that is not a revalidation), so a local file
   * comes opened already (`takeLocal`); a HEAD or a likely 304 would only pay an open and a close more.
   */
  async open(path: Path, o: { send?: boolean } = {}): Promise<OpenFile> {
    const t = this.target(path);
    const shown = typeof path === 'string' ? path : uiPath(t.storage.name, t.rel);
    if (t.rel === '') throw new AppError('not_found', { path: shown }, { reason: 'a folder' });
    // A local disk answers stat and path in one containment check (a real-path walk costs more than a small file's send).
    const { entry: e, local, take } = await this.svc.ops.statForServing(t.place, !!o.send);
    if (e.type !== 'file') throw new AppError('not_found', { path: shown }, { reason: 'a folder' });
    const ops = this.svc.ops;
    return {
      place: t.place,
      name: baseName(t.rel),
      size: e.size,
      mtime: e.mtime,
      etag: servedEtag(e.size, e.mtime, e.etag),
      mime: e.mime ?? mimeOf(baseName(t.rel)),
      read: (span, signal) => ops.read(t.place, span, signal),
      localFile: async () => local,
      takeLocal: take,
      presign: (o) => ops.presignGet(t.place, o),
    };
  }

  /** The bytes of a file (or a range). */
  async read(path: Path, range?: { start: number; end?: number }, signal?: AbortSignal): Promise<Readable> {
    return this.svc.ops.read(this.target(path).place, range, signal);
  }

  /** The item at `path` and everything below it, parents first (archives, ZIP downloads). */
  async tree(path: Path, signal?: AbortSignal) {
    return this.svc.ops.tree(this.target(path).place, signal);
  }

  /** A page of a folder's listing as response JSON (see listing.service). */
  list(input: ListInput, encoding?: PageEncoding): Promise<ListingBody> {
    return this.svc.listing.list(this, input, encoding);
  }

  /** Every entry of a folder from the catalogue, streamed page by page (gateways; see listing.service). */
  entries(path: Path, pageSize?: number): AsyncGenerator<ListedEntry> {
    return this.svc.listing.entries(this, path, pageSize);
  }

  /** Search over what this actor can read (see search.service). */
  search(input: SearchInput): Promise<SearchResult> {
    return this.svc.search.search(this, input);
  }

  /**
   * Writes `body` as the whole file at `path` (atomic; the parent must exist),
   * keeping the replaced bytes as a version first, and announces it.
   */
  async write(path: Path, bytes: Readable, o: WriteOptions): Promise<GateNode> {
    const t = this.writable(path);
    const shown = this.shown(path, t);
    const rules = this.svc.encrypted;
    rules.serverEdit(t.place, o.origin, shown);
    rules.newPath(t.place, shown);
    if (o.fromFile) await rules.guardFile(t.place, o.fromFile, shown);
    bytes = rules.guard(t.place, bytes, shown);
    // The tenant's quotas before anything changes (no version kept, no byte written for a refused write).
    const { turn: quota, created } = await this.svc.quotaTurn(t.storage, t.rel, o.size);
    const undo = created ? () => this.svc.ops.delete(t.place) : undefined;
    try {
      if (o.version !== false) await this.svc.ports.versions?.snapshotBeforeOverwrite(t.place, actorRef(this.actor));
      const entry = await this.svc.ops.write(t.place, quota.bound(bytes), {
        size: o.size,
        mime: o.mime ?? mimeOf(t.rel),
        overwrite: o.overwrite,
        signal: o.signal,
        fromFile: o.fromFile,
      });
      await quota.settle(entry.size).catch(async (e) => {
        // Over the quota at completion (another instance's write took the room meanwhile): a new file goes again.
        await undo?.().catch(() => undefined);
        throw e;
      });
      const body = typeof o.body === 'function' ? o.body() : o.body;
      return await this.svc.ops.written(t.place, entry, this.ctx(o.origin, { audit: o.audit, meta: o.meta, body, created, undo }));
    } finally {
      quota.release();
    }
  }

  /** Creates a folder (and missing parents). Idempotent; a file in the way → `conflict`. */
  async mkdir(path: Path): Promise<FileEntry> {
    const t = this.writable(path);
    this.svc.encrypted.newPath(t.place, this.shown(path, t));
    await this.svc.ops.mkdir(t.place);
    return this.present(await this.svc.ops.written(t.place, await this.svc.ops.stat(t.place), this.ctx('mkdir')), t.level);
  }

  /** Makes sure folder `path` exists (a folder upload's parents): announced only when it had to be made. */
  async ensureFolder(path: Path): Promise<void> {
    const t = this.target(path, 'editor');
    if (t.rel === '' || (await this.svc.catalogue.nodes.get(t.storage, t.rel))?.type === 'dir') return;
    const st = await this.svc.ops.statOrNull(t.place);
    if (st?.type === 'dir') return;
    if (st) throw new AppError('conflict', { path: t.rel, reason: 'a file is in the way' });
    this.svc.encrypted.newPath(t.place, this.shown(path, t));
    await this.svc.ops.mkdir(t.place);
    await this.svc.ops.written(t.place, await this.svc.ops.stat(t.place), this.ctx('mkdir'));
  }

  /** Renames in place. An existing name → `name_taken` (never replaced). */
  async rename(path: Path, newName: string): Promise<FileEntry> {
    const t = this.writable(path);
    checkName(newName);
    this.checkUnlocked(t.place);
    const to = joinRel(parentRel(t.rel), newName);
    const toPlace = { storage_id: t.storage.id, rel: to };
    const shownTo = uiPath(t.storage.name, to);
    this.svc.encrypted.transfer(t.place, toPlace, shownTo);
    this.svc.encrypted.newPath(toPlace, shownTo);
    if (to === t.rel) return this.present(await this.svc.ops.written(t.place, await this.svc.ops.stat(t.place), this.ctx('move')), t.level);
    const caseOnly = to.toLowerCase() === t.rel.toLowerCase();
    if (!caseOnly && (await this.svc.ops.statOrNull({ storage_id: t.storage.id, rel: to }))) throw new AppError('name_taken', { name: newName });
    try {
      return this.present(await this.svc.ops.moveRecorded(t.place, to, { overwrite: false }, this.ctx('move', { audit: 'file.move' })), t.level);
    } catch (e) {
      if (isAppError(e) && e.code === 'conflict') throw new AppError('name_taken', { name: newName });
      if (isAppError(e) && e.code === 'unsupported') throw new AppError('unsupported', { reason: 'this storage cannot rename' });
      throw e;
    }
  }

  /**
   * Moves `from` to `to`: into `to` when it is an existing folder, else to the
   * path `to` (always to the path with `exact`, as WebDAV and SFTP name it). Within one storage with a server-side move it answers at once;
   * otherwise it queues an op and answers with its id.
   */
  async move(from: Path, to: Path, overwrite: boolean, o: PlanOptions = {}): Promise<TransferResult> {
    const { src, dst, dstRel } = await this.plan(from, to, 'editor', overwrite, o);
    if (src.storage.id === dst.storage.id && (await this.svc.ops.canMove(src.storage.id))) {
      await this.svc.ops.moveRecorded(src.place, dstRel, { overwrite }, this.ctx('move', { audit: 'file.move' }));
      return { ok: true };
    }
    return { operation_id: await this.svc.transfers.enqueue(this.actor, 'move', src.place, { storage_id: dst.storage.id, rel: dstRel }, overwrite) };
  }

  /** Copies like `move` places; a single file up to SYNC_COPY_MAX within one storage answers at once. */
  async copy(from: Path, to: Path, overwrite: boolean, o: PlanOptions = {}): Promise<TransferResult> {
    const { src, dst, dstRel, entry } = await this.plan(from, to, 'viewer', overwrite, o);
    if (src.storage.id === dst.storage.id && entry.type === 'file' && entry.size <= SYNC_COPY_MAX) {
      const place = { storage_id: dst.storage.id, rel: dstRel };
      const { turn } = await this.svc.quotaTurn(dst.storage, dstRel, entry.size);
      try {
        await this.svc.ops.copyFile(src.place, dstRel, { size: entry.size, mime: entry.mime, overwrite });
        await this.svc.ops.written(
          place,
          await this.svc.ops.stat(place),
          this.ctx('copy', { audit: 'file.copy', meta: { from: uiPath(src.storage.name, src.rel) } }),
        );
      } finally {
        turn.release();
      }
      return { ok: true };
    }
    // A folder or a large file: refused before the op is queued when its catalogued size is over the quotas.
    await this.svc.quotaRoom(src.storage, src.rel, dst.storage);
    return { operation_id: await this.svc.transfers.enqueue(this.actor, 'copy', src.place, { storage_id: dst.storage.id, rel: dstRel }, overwrite) };
  }

  /**
   * Deletes (into the trash where the storage can move) each path this actor
   * may change; answers per path and never throws for one of them.
   */
  async delete(paths: Path[]): Promise<DeleteResult> {
    if (paths.length > MAX_DELETE_PATHS) throw new AppError('too_many_paths', { max: MAX_DELETE_PATHS }, { max: MAX_DELETE_PATHS });
    const out: DeleteResult = { deleted: [], failed: [], permanent: [] };
    for (const path of paths) {
      const shown = typeof path === 'string' ? path : `${path.storage_id}:${path.rel}`;
      try {
        if ((await this.deleteOne(path)).permanent) out.permanent.push(shown);
        out.deleted.push(shown);
      } catch (e) {
        out.failed.push({ path: shown, error: isAppError(e) ? e.code : 'internal' });
      }
    }
    return out;
  }

  /** Whether a delete of `path` by this actor would land in the trash (else it is for good): the assistant asks first then. */
  async keepsTrash(path: Path): Promise<boolean> {
    const t = this.writable(path);
    return !!this.svc.ports.trash && (await this.svc.ops.canMove(t.storage.id));
  }

  /** Whether an overwrite of `path` keeps the old content as a version. */
  keepsVersions(path: Path): boolean {
    this.writable(path);
    return !!this.svc.ports.versions;
  }

  /** Deletes one item: into the trash when protection is wired and the storage can move, else for good. */
  async deleteOne(path: Path): Promise<{ permanent: boolean }> {
    const t = this.writable(path);
    this.checkUnlocked(t.place);
    const trash = this.svc.ports.trash;
    if (trash) return trash.moveToTrash(t.place, actorRef(this.actor), { request: this.actor.request });
    await this.svc.ops.delete(t.place);
    await this.svc.ops.removed(t.place, { actor: actorRef(this.actor), request: this.actor.request, audit: 'file.delete' });
    return { permanent: true };
  }

  /**
   * Writes `content` as the whole file (creating or replacing it). With
   * `etag`, refuses (`conflict`) when the file changed since it was read.
   */
  async saveText(path: Path, content: string, etag?: string): Promise<FileEntry> {
    const t = this.writable(path);
    const bytes = Buffer.from(content, 'utf8');
    if (bytes.length > MAX_TEXT_BYTES) throw new AppError('payload_too_large', { max: MAX_TEXT_BYTES }, { max: MAX_TEXT_BYTES });
    if (etag !== undefined) {
      const cur = await this.svc.ops.statOrNull(t.place);
      if (cur && etagOf(cur.size, cur.mtime, cur.etag) !== etag)
        throw new AppError('conflict', { path: uiPath(t.storage.name, t.rel), reason: 'changed since it was opened' });
    }
    const node = await this.write(t.place, Readable.from([bytes]), { size: bytes.length, origin: 'save-text', audit: 'file.upload', body: content });
    return this.present(node, t.level);
  }

  /**
   * Creates an empty document of one of the offered types (`newdoc_types`:
   * the new-document port's, else `NEWDOC_TYPES`) in folder `folder`; an
   * existing name → `name_taken`.
   */
  async newFile(folder: Path, name: string, type: string): Promise<FileEntry> {
    const port = this.svc.ports.newdoc;
    const kind = (port ? port.types() : NEWDOC_TYPES).find((x) => x.ext === type);
    if (!kind) throw new AppError('validation_failed', { field: 'type', reason: 'unknown document type' }, { field: 'type' });
    checkName(name);
    // Plain text keeps a typed extension (`ideas.md`); other kinds, and a bare name, get the kind's own.
    const file = extOf(name) === kind.ext || (kind.ext === 'txt' && extOf(name) !== '') ? name : `${name}.${kind.ext}`;
    checkName(file);
    const dir = this.target(folder, 'editor');
    const bytes = port ? await port.template(kind.ext) : Buffer.alloc(0);
    let node: GateNode;
    try {
      node = await this.write({ storage_id: dir.storage.id, rel: joinRel(dir.rel, file) }, Readable.from([bytes]), {
        size: bytes.length,
        mime: kind.mime,
        overwrite: false,
        origin: 'newfile',
        audit: 'file.upload',
        version: false,
      });
    } catch (e) {
      if (isAppError(e) && e.code === 'conflict') throw new AppError('name_taken', { name: file });
      throw e;
    }
    return presentNode(node, dir.level);
  }

  /**
   * A file this actor may write, to be written in parts over several requests
   * (uploads); not a storage root. Clean-up of a session (recovery, abort)
   * passes `ignoreReadOnly`: a storage made read-only, or a file locked, since still lets go of it.
   */
  staged(path: Path, opts?: TargetOptions): StagedWrite {
    const t = this.writable(path, opts);
    const shown = this.shown(path, t);
    if (!opts?.ignoreReadOnly) this.svc.encrypted.newPath(t.place, shown);
    return new StagedWrite(t, this.actor, this.svc, shown);
  }

  /** What a write by this actor records: who, from where, and how. */
  ctx(origin: WriteOrigin, extra: Partial<WriteContext> = {}): WriteContext {
    return { actor: actorRef(this.actor), request: this.actor.request, origin, ...extra };
  }

  /** The entry of a node this face wrote, with the file's live lock (its holder may write it). */
  private present(node: NodeRow, level: Level): FileEntry {
    return presentNode(node, level, this.svc.catalogue.locks.of(node.storage_id, node.path));
  }

  /** The UI path a refusal names. */
  private shown(path: Path, t: Target): string {
    return typeof path === 'string' ? path : uiPath(t.storage.name, t.rel);
  }

  /** A path this actor may change that is not a storage root. */
  private writable(path: Path, opts?: TargetOptions): Target {
    const t = this.target(path, 'editor', opts);
    if (t.rel === '') throw new AppError('forbidden', { reason: 'the storage root itself cannot be changed' });
    return t;
  }

  /**
   * Resolves both ends of a move/copy and the final target path; refuses a
   * folder into itself and taken targets. With `exact` the target is `to`
   * itself; an existing one is refused, or with `overwrite` moved to the trash
   * first when a folder is involved (a file over a file is replaced in place).
   */
  private async plan(from: Path, to: Path, needSrc: Level, overwrite: boolean, o: PlanOptions) {
    const src = this.target(from, needSrc);
    if (src.rel === '') throw new AppError('forbidden', { reason: 'the storage root itself cannot be moved or copied' });
    const dst = this.target(to, 'editor');
    const shownTo = typeof to === 'string' ? to : uiPath(dst.storage.name, dst.rel);
    const entry = await this.svc.ops.stat(src.place);
    const at = await this.svc.ops.statOrNull(dst.place);
    const same = dst.storage.id === src.storage.id && dst.rel === src.rel;
    const dstRel = !o.exact && at?.type === 'dir' && !same ? joinRel(dst.rel, baseName(src.rel)) : dst.rel;
    if (dstRel === '') throw new AppError('forbidden', { reason: 'the storage root cannot be replaced' });
    if (src.storage.id === dst.storage.id && isWithin(dstRel, src.rel))
      throw new AppError('conflict', { path: shownTo, reason: 'a folder cannot go into itself' });
    const dstPlace = { storage_id: dst.storage.id, rel: dstRel };
    this.svc.encrypted.transfer(src.place, dstPlace, shownTo);
    this.svc.encrypted.newPath(dstPlace, shownTo);
    if (!overwrite && dstRel !== dst.rel && (await this.svc.ops.statOrNull({ storage_id: dst.storage.id, rel: dstRel })))
      throw new AppError('conflict', { path: uiPath(dst.storage.name, dstRel) });
    if (!overwrite && dstRel === dst.rel && at) throw new AppError('conflict', { path: shownTo });
    // A moved folder takes no locked file with it, and nothing locked is replaced.
    if (needSrc === 'editor') this.checkUnlocked(src.place);
    this.checkUnlocked({ storage_id: dst.storage.id, rel: dstRel });
    // Replacing where a folder is involved: the old item goes to the trash first (a file over a file is replaced in place).
    if (o.exact && at && !same && (at.type === 'dir' || entry.type === 'dir')) await this.deleteOne(dst.place);
    return { src, dst, dstRel, entry };
  }
}
