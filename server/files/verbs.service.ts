/**
 * The file verbs: mkdir, rename, move, copy, delete, save-text and new file.
 * Names pass the spec's rules in lib/paths; every change ends in the write
 * gate. Large and cross-storage copies (and moves a driver cannot do in place)
 * become a user-visible op and answer with its id.
 */
import { Readable } from 'node:stream';
import type { Principal } from '../auth';
import type { Catalogue, Resolved, WriteContext } from '../catalogue';
import { NodesRepo, mimeOf } from '../catalogue';
import type { Actor, RequestMeta } from '../events';
import type { JobQueue } from '../jobs';
import { AppError, isAppError } from '../errors';
import { baseName, checkName, extOf, isWithin, joinRel, parentRel, uiPath } from '../lib/paths';
import { presentNode, type FileEntry, etagOf } from './entry';
import { TRANSFER_JOB, exists, type TransferPayload } from './transfer';

/** Copies of a single file up to this size within one storage answer at once; the rest run as an op. */
export const SYNC_COPY_MAX = 64 * 1024 * 1024;
/** Paths one delete request may name (spec: `too_many_paths`, max 500). */
export const MAX_DELETE_PATHS = 500;
/** Largest text a save-text call writes. */
export const MAX_TEXT_BYTES = 5 * 1024 * 1024;

/** New-document types that need no external service (office types come with the document server). */
export const NEWDOC_TYPES = [
  { ext: 'txt', group: 'text', mime: 'text/plain', requires: '' },
  { ext: 'md', group: 'text', mime: 'text/markdown', requires: '' },
] as const;

/** Who acts and from where; passed through to the gate and the audit row. */
export interface Caller {
  principal: Principal;
  actor: Actor | null;
  request?: RequestMeta;
}

export type TransferResult = { ok: true } | { operation_id: string };

/**
 * Protection hooks the composition root installs (server/protection): a
 * delete moves into the trash (`permanent` when the storage cannot move), an
 * overwrite snapshots a version first. Without them deletes are permanent.
 */
export interface FileGuards {
  trash: { moveToTrash(storageId: number, rel: string, actor: Actor | null, o?: { request?: RequestMeta }): Promise<{ trashed: boolean; permanent: boolean }> };
  versions: { snapshotBeforeOverwrite(storageId: number, rel: string, actor?: Actor | null): Promise<unknown> };
}

export class VerbsService {
  private guards: FileGuards | null = null;
  constructor(private cat: Catalogue, private queue: JobQueue) {}

  /** Installs the trash and version hooks (once, at boot). */
  useGuards(g: FileGuards): void {
    this.guards = g;
  }

  /** Creates a folder (and missing parents). Idempotent; a file in the way → `conflict`. */
  async mkdir(c: Caller, path: string): Promise<FileEntry> {
    const r = this.writable(c, path);
    const d = await this.cat.driverFor(r.storage.id);
    await d.mkdir(r.rel);
    const node = await this.cat.gate.written(r.storage.id, r.rel, await d.stat(r.rel), this.ctx(c, 'mkdir'));
    return presentNode(node, r.level);
  }

  /** Renames in place. An existing name → `name_taken` (never replaced). */
  async rename(c: Caller, path: string, newName: string): Promise<FileEntry> {
    const r = this.writable(c, path);
    checkName(newName);
    const to = joinRel(parentRel(r.rel), newName);
    const d = await this.cat.driverFor(r.storage.id);
    if (to === r.rel) return presentNode(await this.cat.gate.written(r.storage.id, r.rel, await d.stat(r.rel), this.ctx(c, 'move')), r.level);
    const caseOnly = to.toLowerCase() === r.rel.toLowerCase();
    if (!caseOnly && (await exists(d, to))) throw new AppError('name_taken', { name: newName });
    try {
      if (d.move) await d.move(r.rel, to, { overwrite: false });
      else throw new AppError('unsupported', { reason: 'this storage cannot rename' });
    } catch (e) {
      if (isAppError(e) && e.code === 'conflict') throw new AppError('name_taken', { name: newName });
      throw e;
    }
    const node = await this.cat.gate.moved(r.storage.id, r.rel, to, await d.stat(to), { ...this.ctx(c, 'move'), audit: 'file.move' });
    return presentNode(node, r.level);
  }

  /**
   * Moves `from` to `to`: into `to` when it is an existing folder, else to the
   * path `to`. Within one storage with a driver move it answers at once;
   * otherwise it queues an op.
   */
  async move(c: Caller, from: string, to: string, overwrite: boolean): Promise<TransferResult> {
    const { src, dst, dstRel } = await this.plan(c, from, to, 'editor', overwrite);
    if (src.storage.id === dst.storage.id) {
      const d = await this.cat.driverFor(src.storage.id);
      if (d.move) {
        await d.move(src.rel, dstRel, { overwrite });
        await this.cat.gate.moved(src.storage.id, src.rel, dstRel, await d.stat(dstRel), { ...this.ctx(c, 'move'), audit: 'file.move' });
        return { ok: true };
      }
    }
    return { operation_id: this.enqueue(c, 'move', src, dst.storage.id, dstRel, overwrite) };
  }

  /** Copies like `move` places; a single file up to SYNC_COPY_MAX within one storage answers at once. */
  async copy(c: Caller, from: string, to: string, overwrite: boolean): Promise<TransferResult> {
    const { src, dst, dstRel, entry } = await this.plan(c, from, to, 'viewer', overwrite);
    if (src.storage.id === dst.storage.id && entry.type === 'file' && entry.size <= SYNC_COPY_MAX) {
      const d = await this.cat.driverFor(src.storage.id);
      if (d.copy) await d.copy(src.rel, dstRel, { overwrite });
      else await d.write(dstRel, await d.read(src.rel), { size: entry.size, mime: entry.mime, overwrite });
      await this.cat.gate.written(dst.storage.id, dstRel, await d.stat(dstRel), { ...this.ctx(c, 'copy'), audit: 'file.copy', meta: { from: uiPath(src.storage.name, src.rel) } });
      return { ok: true };
    }
    return { operation_id: this.enqueue(c, 'copy', src, dst.storage.id, dstRel, overwrite) };
  }

  /**
   * Deletes (moves into the trash) each path the caller may change; answers
   * per path, never throws for one of them. `permanent` lists the deleted
   * paths that could not go to the trash and are gone for good.
   */
  async delete(c: Caller, paths: string[]): Promise<{ deleted: string[]; failed: Array<{ path: string; error: string }>; permanent: string[] }> {
    if (paths.length > MAX_DELETE_PATHS) throw new AppError('too_many_paths', { max: MAX_DELETE_PATHS }, { max: MAX_DELETE_PATHS });
    const deleted: string[] = [];
    const permanent: string[] = [];
    const failed: Array<{ path: string; error: string }> = [];
    for (const path of paths) {
      try {
        const r = this.writable(c, path);
        if (this.guards) {
          if ((await this.guards.trash.moveToTrash(r.storage.id, r.rel, c.actor, { request: c.request })).permanent) permanent.push(path);
        } else {
          const d = await this.cat.driverFor(r.storage.id);
          await d.delete(r.rel);
          await this.cat.gate.removed(r.storage.id, r.rel, { actor: c.actor, request: c.request, audit: 'file.delete' });
          permanent.push(path);
        }
        deleted.push(path);
      } catch (e) {
        failed.push({ path, error: isAppError(e) ? e.code : 'internal' });
      }
    }
    return { deleted, failed, permanent };
  }

  /**
   * Writes `content` as the whole file (creating or replacing it). With
   * `etag`, refuses (`conflict`) when the file changed since it was read.
   */
  async saveText(c: Caller, path: string, content: string, etag?: string): Promise<FileEntry> {
    const r = this.writable(c, path);
    const bytes = Buffer.from(content, 'utf8');
    if (bytes.length > MAX_TEXT_BYTES) throw new AppError('payload_too_large', { max: MAX_TEXT_BYTES }, { max: MAX_TEXT_BYTES });
    const d = await this.cat.driverFor(r.storage.id);
    if (etag !== undefined) {
      const cur = await d.stat(r.rel).catch(() => null);
      if (cur && etagOf(cur.size, cur.mtime, cur.etag) !== etag) throw new AppError('conflict', { path, reason: 'changed since it was opened' });
    }
    await this.guards?.versions.snapshotBeforeOverwrite(r.storage.id, r.rel, c.actor);
    const entry = await d.write(r.rel, Readable.from([bytes]), { size: bytes.length, mime: mimeOf(r.rel) });
    const node = await this.cat.gate.written(r.storage.id, r.rel, entry, { ...this.ctx(c, 'save-text'), audit: 'file.upload' });
    if (NodesRepo.textual(node.mime, node.size)) this.cat.nodes.setBody(node.id, content);
    return presentNode(node, r.level);
  }

  /** Creates an empty document of a `NEWDOC_TYPES` type in folder `path`; an existing name → `name_taken`. */
  async newFile(c: Caller, path: string, name: string, type: string): Promise<FileEntry> {
    const t = NEWDOC_TYPES.find((x) => x.ext === type);
    if (!t) throw new AppError('validation_failed', { field: 'type', reason: 'unknown document type' }, { field: 'type' });
    checkName(name);
    const file = extOf(name) === t.ext ? name : `${name}.${t.ext}`;
    checkName(file);
    // The folder may be the storage's root: a new file there changes the root's content, not the root itself.
    const folder = this.cat.resolve(c.principal, path, 'editor');
    const rel = joinRel(folder.rel, file);
    const d = await this.cat.driverFor(folder.storage.id);
    let entry;
    try {
      entry = await d.write(rel, Readable.from([Buffer.alloc(0)]), { size: 0, mime: t.mime, overwrite: false });
    } catch (e) {
      if (isAppError(e) && e.code === 'conflict') throw new AppError('name_taken', { name: file });
      throw e;
    }
    return presentNode(await this.cat.gate.written(folder.storage.id, rel, entry, { ...this.ctx(c, 'newfile'), audit: 'file.upload' }), folder.level);
  }

  private writable(c: Caller, path: string): Resolved {
    const r = this.cat.resolve(c.principal, path, 'editor');
    if (r.rel === '') throw new AppError('forbidden', { reason: 'the storage root itself cannot be changed' });
    return r;
  }

  private ctx(c: Caller, origin: WriteContext['origin']): WriteContext {
    return { actor: c.actor, request: c.request, origin };
  }

  /** Resolves both ends of a move/copy and the final target path; refuses a folder into itself and taken targets. */
  private async plan(c: Caller, from: string, to: string, needSrc: 'viewer' | 'editor', overwrite: boolean) {
    const src = this.cat.resolve(c.principal, from, needSrc);
    if (src.rel === '') throw new AppError('forbidden', { reason: 'the storage root itself cannot be moved or copied' });
    const dst = this.cat.resolve(c.principal, to, 'editor');
    const sd = await this.cat.driverFor(src.storage.id);
    const dd = await this.cat.driverFor(dst.storage.id);
    const entry = await sd.stat(src.rel);
    const at = await dd.stat(dst.rel).catch((e) => {
      if (isAppError(e) && e.code === 'not_found') return null;
      throw e;
    });
    const dstRel = at?.type === 'dir' && !(dst.storage.id === src.storage.id && dst.rel === src.rel) ? joinRel(dst.rel, baseName(src.rel)) : dst.rel;
    if (dstRel === '') throw new AppError('forbidden', { reason: 'the storage root cannot be replaced' });
    if (src.storage.id === dst.storage.id && isWithin(dstRel, src.rel)) throw new AppError('conflict', { path: to, reason: 'a folder cannot go into itself' });
    if (!overwrite && dstRel !== dst.rel && (await exists(dd, dstRel))) throw new AppError('conflict', { path: uiPath(dst.storage.name, dstRel) });
    if (!overwrite && dstRel === dst.rel && at) throw new AppError('conflict', { path: to });
    return { src, dst, dstRel, entry };
  }

  private enqueue(c: Caller, op: 'copy' | 'move', src: Resolved, dstStorage: number, dstRel: string, overwrite: boolean): string {
    const payload: TransferPayload = { op, src: { storage_id: src.storage.id, rel: src.rel }, dst: { storage_id: dstStorage, rel: dstRel }, overwrite, actor: c.actor, request: c.request };
    return this.queue.enqueue(TRANSFER_JOB, payload, { ownerId: c.principal.id, visible: true, maxAttempts: 1 });
  }
}
